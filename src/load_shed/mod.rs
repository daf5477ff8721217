//! Fail fast instead of waiting: reject a request with
//! [`Overloaded`](crate::error::Overloaded) when the inner service is not ready.
//!
//! Any `Pending` of the inner stack counts as overload — a rate limiter's
//! empty window or a full buffer included. To shed only on a full
//! concurrency limit, you do not need `LoadShed` at all: use
//! [`ConcurrencyLimitLayer::shed_when_full`](crate::limit::ConcurrencyLimitLayer::shed_when_full).
//!
//! ## The stacks, and what each does
//!
//! `ServiceBuilder` order: the first `.layer(..)` is the outermost.
//!
//! ```
//! use edgeshed::admission::Admission;
//! use edgeshed::limit::{ConcurrencyLimitLayer, GlobalConcurrencyLimitLayer};
//! use edgeshed::load_shed::LoadShedLayer;
//! use edgeshed::time::ManualClock;
//! use std::time::Duration;
//! use tower::ServiceBuilder;
//!
//! # fn main() -> Result<(), edgeshed::error::InvalidConfig> {
//! let echo = tower::service_fn(|x: u32| async move { Ok::<_, std::convert::Infallible>(x) });
//! let clock = ManualClock::new(); // `TokioClock` on tokio
//!
//! // 1. Shed when the limit is full: no LoadShed needed. Rejections are
//! //    counted in the limit's `stats().shed`.
//! let shed = ServiceBuilder::new()
//!     .layer(ConcurrencyLimitLayer::new(6)?.shed_when_full())
//!     .service(echo.clone());
//!
//! // 2. A bounded queue: at most 12 wait, each at most 20 ms, then `Overloaded`.
//! let queue = ServiceBuilder::new()
//!     .layer(ConcurrencyLimitLayer::new(6)?.queue(12, Duration::from_millis(20))?.clock(clock))
//!     .service(echo.clone());
//!
//! // 3. LoadShed over a waiting limit (tower's classic stack): the same as 1.
//! //    LoadShed counts its rejections itself (`layer.shed_count()`), because
//! //    the limit's own `stats()` never sees them.
//! let load_shed = LoadShedLayer::new();
//! let classic = ServiceBuilder::new()
//!     .layer(load_shed.clone())
//!     .layer(ConcurrencyLimitLayer::new(6)?)
//!     .service(echo.clone());
//!
//! // 4. LoadShed over a shared limit, counting into its `stats().shed`.
//! let admission = Admission::wait(6)?;
//! let shared = ServiceBuilder::new()
//!     .layer(LoadShedLayer::counting_in(&admission))
//!     .layer(GlobalConcurrencyLimitLayer::new(admission.clone()))
//!     .service(echo);
//! # let _ = (shed, queue, classic, shared, load_shed.shed_count());
//! # Ok(())
//! # }
//! ```
//!
//! **LoadShed outside a queue turns the queue off.** A queued request is a
//! readiness that is still pending, and `LoadShed` rejects every pending
//! readiness at once: `LoadShed` over `queue(12, ..)` sheds exactly like
//! `shed_when_full()`, and nobody ever waits. Put `LoadShed` *outside* a limit
//! only to shed on something else (a rate limit, a buffer), and *inside* the
//! queue, or not at all, to keep the queue.
//!
//! ## No parked waiters
//!
//! tower's `LoadShed` leaves the inner service's pending readiness in place
//! after rejecting a request. Over a concurrency limit that means a queued
//! waiter stays behind, which captures the next released permit while its
//! owner sits idle; other instances keep being rejected even though nothing
//! is in flight. edgeshed's `LoadShed` withdraws the pending readiness by
//! replacing the inner service with a fresh clone, so a rejected instance
//! never holds or captures capacity. That is why it requires `S: Clone`
//! (see [`LoadShed`]: box with tower's `BoxCloneService`, not `BoxService`).
//!
//! Over edgeshed's own [`ConcurrencyLimit`](crate::limit::ConcurrencyLimit)
//! (stack 3) nothing is queued in the first place: `LoadShed` asks the limit
//! right inside it for a non-queuing readiness probe, and a full limit answers
//! "not ready" without registering a waiter, so there is nothing to withdraw
//! and no clone is made. That keeps the rejection path as cheap as a failed
//! `try_acquire`.

mod counter;
mod future;
mod layer;
pub(crate) mod probe;
mod service;

pub mod error {
    //! The error of [`LoadShed`](super::LoadShed).
    pub use crate::error::{OverloadCause, Overloaded};
}

pub use counter::ShedCounter;
pub use future::ResponseFuture;
pub use layer::LoadShedLayer;
pub use service::LoadShed;
