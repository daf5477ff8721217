//! Adaptive concurrency limits: the limit follows the origin's capacity.
//!
//! A fixed `max_in_flight` is a guess. An adaptive limit measures every
//! call — its round-trip time from admission to completion, how many calls
//! were in flight when it started, and whether it was dropped — and moves
//! the limit of the underlying [`Semaphore`](crate::semaphore::Semaphore)
//! with [`set_limit`](crate::semaphore::Semaphore::set_limit). Lowering the
//! limit never interrupts running work: calls already admitted finish, and
//! no new call is admitted until fewer than the new limit are in flight.
//!
//! | algorithm | signal | origin it suits |
//! |---|---|---|
//! | [`Aimd`] | drops (503, 429, timeouts, errors) | one that sheds its excess quickly |
//! | [`Gradient2`] | latency against a long-term baseline | one that queues its excess |
//! | [`Vegas`] | latency against the no-load latency | one that queues its excess |
//!
//! Each keeps the limit within its [`Bounds`] (edge defaults: initial 6,
//! min 1, max 64). Use one through [`AdaptiveLimitLayer`], or drive a
//! [`Controller`] yourself around any call.
//!
//! ```
//! use edgeshed::limit::adaptive::{AdaptiveLimitLayer, Gradient2};
//! use edgeshed::time::ManualClock;
//! use std::time::Duration;
//! use tower_layer::Layer;
//!
//! # fn main() -> Result<(), edgeshed::InvalidConfig> {
//! let clock = ManualClock::new(); // `TokioClock` (feature `tokio`) in production
//! let origin = tower::service_fn(|x: u32| async move { Ok::<_, std::convert::Infallible>(x) });
//! let limited = AdaptiveLimitLayer::new(Gradient2::default())
//!     .queue(6, Duration::from_millis(20))?
//!     .clock(clock)
//!     .layer(origin);
//! assert_eq!(limited.admission().stats().limit, 6);
//! # Ok(())
//! # }
//! ```

mod aimd;
mod bounds;
mod classify;
mod controller;
mod future;
mod gradient2;
mod layer;
mod named;
mod service;
mod vegas;
mod window;

pub use aimd::Aimd;
pub use bounds::{Bounds, InvalidBounds};
pub use classify::{Classify, ErrorsAreDrops};
pub use controller::{Controller, Started};
pub use future::SampledFuture;
pub use gradient2::Gradient2;
pub use layer::AdaptiveLimitLayer;
pub use named::{AnyLimit, UnknownAlgorithm};
pub use service::{AdaptiveLimit, Sampled};
pub use vegas::Vegas;

use crate::time::Instant;
use core::time::Duration;

/// One completed call, as an adaptive [`Limit`] sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    started: Instant,
    rtt: Duration,
    in_flight: usize,
    dropped: bool,
}

impl Sample {
    /// A call admitted at `started` that took `rtt` to complete, with
    /// `in_flight` calls in flight when it started (itself included), and
    /// `dropped` if it ended in an overload answer, a timeout or an error.
    pub const fn new(started: Instant, rtt: Duration, in_flight: usize, dropped: bool) -> Self {
        Self {
            started,
            rtt,
            in_flight,
            dropped,
        }
    }

    /// When the call was admitted.
    pub const fn started(&self) -> Instant {
        self.started
    }

    /// When the call completed (`started + rtt`).
    pub fn completed(&self) -> Instant {
        self.started.saturating_add(self.rtt)
    }

    /// The round-trip time from admission to completion.
    pub const fn rtt(&self) -> Duration {
        self.rtt
    }

    /// Calls in flight when this one started, itself included.
    pub const fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Whether the call was dropped (overload answer, timeout, error).
    pub const fn dropped(&self) -> bool {
        self.dropped
    }
}

/// A limit algorithm: fed one [`Sample`] per completed call, it answers the
/// new limit, which always lies within its [`bounds`](Limit::bounds).
pub trait Limit {
    /// The range the limit stays in, and where it starts.
    fn bounds(&self) -> Bounds;

    /// The current limit, within [`bounds`](Limit::bounds).
    fn limit(&self) -> usize;

    /// Takes one sample into account and returns the new limit.
    fn update(&mut self, sample: &Sample) -> usize;
}
