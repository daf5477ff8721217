//! Rate limits per key, on the injected clock: a GCRA (generic cell rate
//! algorithm) with one theoretical arrival time per key.
//!
//! [`RateLimiter`] checks calls directly; [`RateLimitLayer`] is its tower
//! middleware, which sheds a call over its rate with
//! [`RateLimited`](crate::error::RateLimited) (HTTP 429, with the time until
//! it would be allowed) or lets it wait for its turn up to a bound. An
//! [`Admission`](crate::admission::Admission) can check one too, before its
//! concurrency limit ([`Options::rate`](crate::admission::Options::rate)).
//!
//! Time comes from a [`Clock`](crate::time::Clock), never from the system:
//! tower's `RateLimit` reads tokio's `Instant::now()`, which panics on
//! `wasm32-unknown-unknown`; this one runs there on JavaScript's clock.
//!
//! Per-key state is bounded by [`Rate::max_keys`], without the trap of
//! evicting the oldest key (which hands a limited client a fresh allowance
//! when it comes back): only keys whose state has fully recovered — equal to
//! no state — are dropped, found in amortised O(log n) by a heap of recovery
//! times. A full table degrades, never locks out: while every tracked key is
//! still limited, new keys share one overflow allowance (same rate and
//! burst; counted in [`RateStats::overflow`]), and keys already tracked are
//! never affected. A hostile client that invents keys faster than the table
//! recovers can still use up that one shared allowance, so new keys then
//! wait for it; raise `max_keys`, or key by something hard to invent.
//!
//! ```
//! use edgeshed::admission::Call;
//! use edgeshed::error::RateLimited;
//! use edgeshed::rate_limit::{Rate, RateLimitLayer, RateLimiter};
//! use edgeshed::time::ManualClock;
//! use std::time::Duration;
//! use tower::ServiceExt;
//! use tower_layer::Layer;
//!
//! # futures::executor::block_on(async {
//! let clock = ManualClock::new(); // `TokioClock`, or edgeshed-wasm's `JsClock` on wasm
//! let limiter = RateLimiter::new(Rate::per_second(1).unwrap(), clock.clone());
//! let echo = tower::service_fn(|tenant: &'static str| async move { Ok::<_, std::convert::Infallible>(tenant) });
//! let svc = RateLimitLayer::new(limiter)
//!     .read_call_with(|tenant: &&'static str| Call::default().with_key(*tenant))
//!     .layer(echo);
//!
//! assert_eq!(svc.clone().oneshot("a").await.unwrap(), "a");
//! let error = svc.clone().oneshot("a").await.unwrap_err();
//! let limited = error.downcast_ref::<RateLimited>().unwrap();
//! assert_eq!(limited.retry_after(), Some(Duration::from_secs(1)));
//! assert_eq!(svc.clone().oneshot("b").await.unwrap(), "b"); // another key
//! # });
//! ```

mod future;
mod gcra;
mod layer;
mod limiter;
mod rate;
mod recovery;
mod reservation;
mod service;
mod table;

pub use future::ResponseFuture;
pub use layer::RateLimitLayer;
pub use limiter::{Allowance, RateLimiter, RateStats};
pub use rate::Rate;
pub use reservation::Reservation;
pub use service::RateLimit;
