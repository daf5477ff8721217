//! # edgeshed
//!
//! Admission control for async services that runs on any executor — native
//! (tokio, `futures`' `LocalPool`) or inside a wasm edge worker driven by
//! JavaScript promises.
//!
//! When a downstream slows down, code that keeps accepting work piles up
//! futures until memory runs out. edgeshed gives every service an explicit
//! capacity and decides, for each request, to **admit** it, **queue** it
//! (bounded in length and time) or **shed** it at once with an
//! [`Overloaded`] error that maps to HTTP 503.
//!
//! The middleware implement tower's [`Service`](tower_service::Service) and
//! [`Layer`](tower_layer::Layer) traits, so they compose with the tower
//! ecosystem, but they need no runtime and never panic:
//!
//! | module | what it does |
//! |---|---|
//! | [`semaphore`] | FIFO-fair, cancellation-safe async semaphore with owned permits |
//! | [`admission`] | a shared limit plus its [`Policy`]: wait, shed or bounded queue; per call a [`Criticality`] (reserves, queue order, displacement) and a [`Key`] (fair share); codel |
//! | [`limit`] | [`ConcurrencyLimit`] service and layers; [`ClassifiedLimitLayer`]: admission per request (criticality and key read from it); [`AdaptiveLimitLayer`]: the limit follows the origin (AIMD, Gradient2, Vegas) |
//! | [`rate_limit`] | [`RateLimiter`] (GCRA per key, on the injected clock, bounded key table) and [`RateLimitLayer`] |
//! | [`load_shed`] | [`LoadShed`]: reject when the inner service is not ready |
//! | [`deadline`] | [`Deadline`](deadline::Deadline): one budget for readiness wait + call |
//! | [`time`] | the injected [`Clock`](time::Clock), a [`ManualClock`](time::ManualClock) for tests, `TokioClock` (feature `tokio`) |
//! | `http_body` | `PermitBody`: the permit lives as long as an `http::Response`'s body (feature `http-body`) |
//!
//! Optional features, all off by default: `tokio` ships
//! `time::TokioClock`; `http` reads a request's criticality and key from
//! `http::Request` extensions (`admission::FromExtensions`); `http-body`
//! (with `http`) ships `http_body::PermitBody` and
//! `ConcurrencyLimitLayer::hold_permit_in_body`. (The npm package and the
//! edge worker are not features of this crate: they are the workspace's
//! `edgeshed-js` and `edgeshed-worker` crates, built for wasm32 on top of
//! the `edgeshed-wasm` runtime.)
//!
//! ## Example
//!
//! A service that handles at most two requests at once, lets at most two
//! more wait for 20 ms, and sheds the rest:
//!
//! ```
//! use edgeshed::error::Overloaded;
//! use edgeshed::limit::ConcurrencyLimitLayer;
//! use edgeshed::time::ManualClock;
//! use std::future::poll_fn;
//! use std::time::Duration;
//! use tower_layer::Layer;
//! use tower_service::Service;
//!
//! # futures::executor::block_on(async {
//! let clock = ManualClock::new(); // a real timer in production: `TokioClock` on tokio
//! let origin = tower::service_fn(|x: u32| async move { Ok::<_, std::convert::Infallible>(x * 2) });
//! let limited = ConcurrencyLimitLayer::new(2)?
//!     .queue(2, Duration::from_millis(20))?
//!     .clock(clock)
//!     .layer(origin);
//!
//! // Five callers at once: two run, two wait, the fifth is shed immediately.
//! let mut running = Vec::new();
//! for x in 0..2 {
//!     let mut svc = limited.clone();
//!     poll_fn(|cx| svc.poll_ready(cx)).await.unwrap();
//!     running.push(svc.call(x));
//! }
//! let mut waiting: Vec<_> = (0..2).map(|_| limited.clone()).collect();
//! for svc in &mut waiting {
//!     assert!(futures::poll!(poll_fn(|cx| svc.poll_ready(cx))).is_pending());
//! }
//! let mut fifth = limited.clone();
//! poll_fn(|cx| fifth.poll_ready(cx)).await.unwrap();
//! let error = fifth.call(4).await.unwrap_err();
//! assert!(error.is::<Overloaded>());
//!
//! // When a running request completes, the first waiter gets its permit.
//! assert_eq!(running.remove(0).await.unwrap(), 0);
//! poll_fn(|cx| waiting[0].poll_ready(cx)).await.unwrap();
//! assert_eq!(waiting[0].call(21).await.unwrap(), 42);
//! # Ok::<(), edgeshed::InvalidConfig>(())
//! # }).unwrap();
//! ```
//!
//! ## Never a panic
//!
//! On wasm a panic is a trap that breaks the isolate for every later request.
//! Misuse — `call` without readiness, polling a finished future — yields an
//! error ([`NotReady`](error::NotReady)) instead, and the crate denies
//! `unwrap`, `expect`, `panic!` and indexing outside tests.

#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod admission;
mod call;
mod criticality;
pub mod deadline;
pub mod error;
#[cfg(feature = "http-body")]
#[cfg_attr(docsrs, doc(cfg(feature = "http-body")))]
pub mod http_body;
mod key;
pub mod limit;
pub mod load_shed;
mod oneshot;
pub mod options_schema;
mod per_criticality;
pub mod rate_limit;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod refusal;
mod release;
pub mod semaphore;
mod sync;
pub mod time;

pub use admission::{Admission, Call, Criticality, Policy, Reserve, Stats};
pub use error::{BoxError, Expired, InvalidConfig, Overloaded, RateLimited};
pub use key::Key;
pub use limit::{
    AdaptiveLimitLayer, ClassifiedLimit, ClassifiedLimitLayer, ConcurrencyLimit,
    ConcurrencyLimitLayer, GlobalConcurrencyLimitLayer,
};
pub use load_shed::{LoadShed, LoadShedLayer};
pub use per_criticality::PerCriticality;
pub use rate_limit::{RateLimitLayer, RateLimiter};

/// The README's and the Rust reference's (docs/rust.md) examples, compiled
/// and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
#[doc = include_str!("../docs/rust.md")]
pub struct ReadmeDoctests;
