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
//! | [`Gradient2`] | latency against the no-load latency, proportional response | one that queues its excess |
//! | [`Vegas`] | latency against the no-load latency, queue thresholds | one that queues its excess |
//!
//! Each keeps the limit within its [`Bounds`] (edge defaults: initial 6,
//! min 1, max 64). Use one through [`AdaptiveLimitLayer`], or drive a
//! [`Controller`] yourself around any call.
//!
//! **One outcome contract.** Every finished call is classified once, by
//! [`Ending::outcome`], as [`Outcome::Served`], [`Outcome::Dropped`] or
//! [`Outcome::Ignored`]; the tower layer ([`Classify`]), the npm package and
//! the gateway all map what they saw to an [`Ending`] and use that one
//! classification.
//!
//! **Fleets.** Gradient2 and Vegas are rules in one [`Windowed`] decorator:
//! windows of fresh calls, a no-load RTT from drains that every limiter
//! runs at the same wall-clock moments ([`Baseline`], [`DrainSchedule`]),
//! slow start, and growth and thresholds in proportion to each limiter's
//! own limit. N independent limiters in front of one origin of capacity C
//! then keep its concurrency near C, share it fairly, and recover from
//! limits that start too high and from bursts of drops. A limiter's limit
//! never goes below its minimum (1), so N limiters never hold fewer than N
//! calls: where isolates outnumber the origin's capacity, run the limit
//! once for the fleet instead, over the [`WindowSummary`] reports of all
//! isolates ([`WindowLimit`]; the gateway's `budget.adaptive`).
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
mod outcome;
mod sample_end;
#[cfg(feature = "http-body")]
mod sampled_body;
mod service;
mod summary;
mod vegas;
mod windowed;

pub use aimd::Aimd;
pub use bounds::{Bounds, InvalidBounds};
pub use classify::{Classify, DefaultClassify};
pub use controller::{Controller, Started};
pub use future::SampledFuture;
pub use gradient2::{Gradient2, Gradient2Rule};
pub use layer::AdaptiveLimitLayer;
pub use named::{AnyLimit, UnknownAlgorithm};
pub use outcome::{Ending, Outcome};
pub use sample_end::{PendingSample, SampleEnd};
#[cfg(feature = "http-body")]
#[cfg_attr(docsrs, doc(cfg(feature = "http-body")))]
pub use sampled_body::SampledBody;
pub use service::{AdaptiveLimit, Sampled};
pub use summary::{InvalidSummary, WindowSummary};
pub use vegas::{Vegas, VegasRule};
pub use windowed::{Baseline, DrainSchedule, WindowRule, Windowed};

use crate::time::Instant;
use core::time::Duration;

/// One completed call, as an adaptive [`Limit`] sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    started: Instant,
    rtt: Duration,
    in_flight: usize,
    dropped: bool,
    wall_started: Option<Duration>,
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
            wall_started: None,
        }
    }

    /// The sample of a call that ended with `outcome`: `None` for an
    /// [`Outcome::Ignored`] call, which is no sample at all.
    pub const fn of(
        started: Instant,
        rtt: Duration,
        in_flight: usize,
        outcome: Outcome,
    ) -> Option<Self> {
        match outcome {
            Outcome::Served => Some(Self::new(started, rtt, in_flight, false)),
            Outcome::Dropped => Some(Self::new(started, rtt, in_flight, true)),
            Outcome::Ignored => None,
        }
    }

    /// The same sample, admitted at `wall` on the wall clock (time since
    /// the Unix epoch, [`Clock::wall_time`](crate::time::Clock::wall_time)):
    /// what limiters in different isolates agree on, so their drains
    /// coincide.
    pub const fn with_wall_start(mut self, wall: Duration) -> Self {
        self.wall_started = Some(wall);
        self
    }

    /// The same sample with its wall-clock start, if known.
    pub(crate) const fn with_wall(mut self, wall: Option<Duration>) -> Self {
        self.wall_started = wall;
        self
    }

    /// When the call was admitted on the wall clock, if known.
    pub const fn wall_started(&self) -> Option<Duration> {
        self.wall_started
    }

    /// When the call completed on the wall clock; without a wall-clock
    /// start, the time since the sample clock's origin.
    pub fn wall_completed(&self) -> Duration {
        self.wall_started
            .unwrap_or(self.started.since_origin())
            .saturating_add(self.rtt)
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

/// A [`Limit`] that also takes whole windows of calls gathered elsewhere:
/// what a fleet limit runs over the [`WindowSummary`] reports of many
/// isolates (merge them, then feed the merged window).
///
/// A window should hold the calls *started* after the previous window was
/// fed (so that it saw the limit the previous one chose), and enough of
/// them to be a round trip's worth (at least about the current limit);
/// `span` is how long it lasted (growth is per round trip).
///
/// ```
/// use edgeshed::limit::adaptive::{AnyLimit, Bounds, Limit, Outcome, WindowLimit, WindowSummary};
/// use std::time::Duration;
///
/// let mut fleet = AnyLimit::named("gradient2", Bounds::new(8, 1, 256).unwrap()).unwrap();
/// // The no-load RTT, measured while the fleet's limit was drained.
/// let mut drained = WindowSummary::default();
/// (0..8).for_each(|_| drained.record(Outcome::Served, Duration::from_millis(20), 1));
/// fleet.on_drain(&drained);
/// // Two isolates' reports of one window: 20 ms, no queue, limit in use.
/// let mut window = WindowSummary::default();
/// for isolate in 0..2 {
///     let mut report = WindowSummary::default();
///     (0..8).for_each(|_| report.record(Outcome::Served, Duration::from_millis(20), 8));
///     window.merge(&report);
/// }
/// let span = Duration::from_millis(20);
/// assert!(fleet.on_window(&window, span) > 8); // slow start: no queue, room to grow
/// ```
pub trait WindowLimit: Limit {
    /// Takes one window of calls that lasted `span` and returns the new limit.
    fn on_window(&mut self, window: &WindowSummary, span: Duration) -> usize;

    /// Takes the calls measured during a drain (the limit held low
    /// everywhere, the origin's queue empty): their mean RTT is a candidate
    /// no-load RTT ([`Baseline`]). Loss-based algorithms ignore it.
    fn on_drain(&mut self, window: &WindowSummary) -> usize;
}
