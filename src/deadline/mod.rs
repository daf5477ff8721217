//! One absolute deadline per request, covering the wait for readiness *and*
//! the call.
//!
//! tower's `Timeout` starts its clock at `call`, so time spent waiting for a
//! permit is free and a request can live far longer than its budget.
//! [`Deadline`] fixes the deadline when a request starts waiting for
//! readiness (or at `call` if it did not have to wait), fails with [`Expired`](crate::error::Expired) (HTTP 504) when it
//! passes, and hands the absolute deadline to the request through a
//! [`Stamp`], so that downstream calls get the *remaining* budget instead of
//! a fresh one.
//!
//! ```
//! use edgeshed::deadline::DeadlineLayer;
//! use edgeshed::time::{Clock, Instant, ManualClock};
//! use tower_layer::Layer;
//! use tower_service::Service;
//! use std::future::poll_fn;
//! use std::time::Duration;
//!
//! struct Request { deadline: Option<Instant> }
//! # futures::executor::block_on(async {
//! let clock = ManualClock::new();
//! let downstream = tower::service_fn(|req: Request| async move {
//!     Ok::<_, std::convert::Infallible>(req.deadline)
//! });
//! let mut svc = DeadlineLayer::new(Duration::from_millis(250), clock.clone())
//!     .stamp_with(|req: &mut Request, at: Instant| req.deadline = Some(at))
//!     .layer(downstream);
//!
//! poll_fn(|cx| svc.poll_ready(cx)).await.unwrap(); // ready at once: nothing spent
//! clock.advance(Duration::from_millis(100));
//! let at = svc.call(Request { deadline: None }).await.unwrap().unwrap();
//! // The budget started at `call`: all of it is left for what the service calls next.
//! assert_eq!(at.saturating_duration_since(clock.now()), Duration::from_millis(250));
//! # });
//! ```

mod future;
mod layer;
mod service;
mod stamp;

pub use future::ResponseFuture;
pub use layer::DeadlineLayer;
pub use service::Deadline;
pub use stamp::{NoStamp, Stamp};

pub mod error {
    //! The error of [`Deadline`](super::Deadline).
    pub use crate::error::Expired;
}
