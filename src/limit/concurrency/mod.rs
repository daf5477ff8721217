//! Limit the number of requests a service handles at once.
//!
//! [`ConcurrencyLimit`] reserves a permit in `poll_ready` and gives it to the
//! response future in `call`; the permit comes back when the response
//! completes or is dropped — or, with [`HoldInResponse`], when the response
//! itself (for example a streamed body) is dropped.
//!
//! Unlike tower's limiter it never panics (a `call` without readiness fails
//! with [`NotReady`](crate::error::NotReady)), it can shed or queue with a
//! bound instead of waiting forever (see [`Policy`](crate::admission::Policy)),
//! and it runs on any executor.
//!
//! ```
//! use edgeshed::limit::ConcurrencyLimitLayer;
//! use tower_layer::Layer;
//! use tower_service::Service;
//! use std::future::poll_fn;
//! # futures::executor::block_on(async {
//! let echo = tower::service_fn(|x: u32| async move { Ok::<_, std::convert::Infallible>(x) });
//! let mut svc = ConcurrencyLimitLayer::new(1).unwrap().shed_when_full().layer(echo);
//!
//! poll_fn(|cx| svc.poll_ready(cx)).await.unwrap();
//! let first = svc.call(1);                        // holds the only permit
//! poll_fn(|cx| svc.poll_ready(cx)).await.unwrap();
//! let error = svc.call(2).await.unwrap_err();     // shed, not queued
//! assert!(error.is::<edgeshed::error::Overloaded>());
//! assert_eq!(first.await.unwrap(), 1);            // the permit is back
//! # });
//! ```

mod future;
mod global;
mod layer;
mod service;

pub use crate::release::{HoldInResponse, Permitted, Release, ReleaseOnCompletion};
pub use future::ResponseFuture;
pub use global::GlobalConcurrencyLimitLayer;
pub use layer::{ConcurrencyLimitLayer, NeedsClock};
pub use service::ConcurrencyLimit;
