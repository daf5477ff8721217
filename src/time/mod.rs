//! Injected time: an [`Instant`], the [`Clock`] trait and the clocks that ship.
//!
//! The core never reads the system time itself (`std::time::Instant::now()`
//! panics on `wasm32-unknown-unknown`). Whatever needs time — queue timeouts,
//! deadlines — receives a [`Clock`]: JavaScript timers on wasm, a runtime's
//! timer natively (the `tokio` feature ships `TokioClock`), or the
//! [`ManualClock`] in tests.

mod manual;
#[cfg(feature = "tokio")]
mod tokio;

#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub use self::tokio::TokioClock;
pub use manual::{ManualClock, ManualSleep};

use core::future::Future;
use core::ops::Add;
use core::time::Duration;

/// A point in time, measured from the origin of the [`Clock`] that produced it.
///
/// Instants from different clocks are not comparable in any meaningful way;
/// edgeshed only ever compares instants of the same clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(Duration);

impl Instant {
    /// The instant `elapsed` after the clock's origin.
    pub const fn from_origin(elapsed: Duration) -> Self {
        Self(elapsed)
    }

    /// The time elapsed between the clock's origin and this instant.
    pub const fn since_origin(self) -> Duration {
        self.0
    }

    /// The time from `earlier` to `self`, or zero if `earlier` is later.
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        self.0.saturating_sub(earlier.0)
    }

    /// `self + duration`, saturating at the largest representable instant.
    pub fn saturating_add(self, duration: Duration) -> Instant {
        Instant(self.0.saturating_add(duration))
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;

    /// Saturating addition: an instant never overflows.
    fn add(self, duration: Duration) -> Instant {
        self.saturating_add(duration)
    }
}

/// A source of time and timers.
///
/// Implement it to plug edgeshed into an executor's timer (tokio's
/// `sleep_until`, JavaScript's `setTimeout`, ...). Clones must share one time
/// line. A clock whose sleeps really complete also implements the marker
/// [`RealClock`]; the constructors that arm timers (queue timeouts,
/// deadlines) ask for it.
///
/// ```
/// use edgeshed::time::{Clock, Instant, RealClock};
/// use std::time::Duration;
///
/// /// A clock backed by an executor's timer (a ready future stands in here).
/// #[derive(Clone)]
/// struct MyClock;
///
/// impl Clock for MyClock {
///     type Sleep = std::future::Ready<()>;
///     fn now(&self) -> Instant {
///         Instant::from_origin(Duration::ZERO)
///     }
///     fn sleep_until(&self, _deadline: Instant) -> Self::Sleep {
///         std::future::ready(())
///     }
/// }
///
/// // Its sleeps complete, so it may arm queue timeouts and deadlines.
/// impl RealClock for MyClock {}
/// ```
pub trait Clock: Clone {
    /// The future returned by [`sleep_until`](Clock::sleep_until).
    type Sleep: Future<Output = ()>;

    /// The current time.
    fn now(&self) -> Instant;

    /// A future that completes once [`now`](Clock::now) has reached `deadline`.
    fn sleep_until(&self, deadline: Instant) -> Self::Sleep;

    /// The wall-clock time (since the Unix epoch), if this clock can read
    /// it: what clocks in different processes and isolates agree on, unlike
    /// their [`Instant`]s. The adaptive limits schedule their drains on it
    /// ([`DrainSchedule`](crate::limit::adaptive::DrainSchedule)), so that
    /// independent limiters drain together. `None` (the default): they
    /// schedule them on [`now`](Clock::now) instead.
    fn wall_time(&self) -> Option<Duration> {
        None
    }
}

/// A [`Clock`] whose time moves and whose sleeps complete: every clock but
/// [`NoClock`].
///
/// A marker, with nothing to implement. The constructors that accept a
/// [`Policy`](crate::admission::Policy) that can time out
/// ([`Admission::new`](crate::admission::Admission::new),
/// [`NeedsClock::clock`](crate::limit::concurrency::NeedsClock::clock) after
/// [`ConcurrencyLimitLayer::queue`](crate::limit::ConcurrencyLimitLayer::queue), and
/// [`with_policy`](crate::limit::ConcurrencyLimitLayer::with_policy)), the ones
/// that arm a deadline ([`Admission::admit_before`](crate::admission::Admission::admit_before),
/// [`Deadline`](crate::deadline::Deadline), [`DeadlineLayer`](crate::deadline::DeadlineLayer))
/// require it, so a queue timeout or a deadline that could never fire does
/// not compile:
///
/// ```compile_fail
/// use edgeshed::admission::{Admission, Policy};
/// use edgeshed::time::NoClock;
/// use std::time::Duration;
///
/// let policy = Policy::Queue { max_queue: 8, timeout: Duration::from_millis(50) };
/// let admission = Admission::new(1, policy, NoClock); // error: NoClock is not a RealClock
/// # let _ = admission.unwrap();
/// ```
///
/// Implement it for your own clock only if its sleeps complete once
/// [`Clock::now`] reaches their deadline.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a `RealClock`: its sleeps never complete, so a queue timeout or a deadline on it could never fire",
    label = "needs a clock whose sleeps complete",
    note = "without a clock use `Admission::wait`/`Admission::shed` or `ConcurrencyLimitLayer::new`/`shed`; otherwise pass a real clock (`TokioClock` with the `tokio` feature, or your own: `impl RealClock for MyClock {{}}`)"
)]
pub trait RealClock: Clock {}

/// The clock of policies that never need a timer (wait and shed).
///
/// Its time stands still at the origin and its sleeps never complete, so it
/// is not a [`RealClock`]: only the constructors that arm no timer accept it
/// ([`Admission::wait`](crate::admission::Admission::wait),
/// [`Admission::shed`](crate::admission::Admission::shed),
/// [`ConcurrencyLimitLayer::new`](crate::limit::ConcurrencyLimitLayer::new) and
/// [`shed`](crate::limit::ConcurrencyLimitLayer::shed),
/// [`ConcurrencyLimit::new`](crate::limit::ConcurrencyLimit::new)).
///
/// ```compile_fail
/// use edgeshed::limit::ConcurrencyLimitLayer;
/// use edgeshed::time::NoClock;
/// use std::time::Duration;
///
/// // error: a queue timeout on a clock whose sleeps never complete
/// let layer = ConcurrencyLimitLayer::new(1).unwrap()
///     .queue(8, Duration::from_millis(50)).unwrap()
///     .clock(NoClock);
/// ```
///
/// ```compile_fail
/// use edgeshed::deadline::DeadlineLayer;
/// use edgeshed::time::NoClock;
/// use std::time::Duration;
///
/// // error: a deadline that could never fire
/// let layer = DeadlineLayer::new(Duration::from_millis(50), NoClock);
/// ```
///
/// ```compile_fail
/// use edgeshed::admission::Admission;
/// use edgeshed::time::{Instant, NoClock};
/// use std::time::Duration;
///
/// // error: `admit_before` needs a clock that can fire the deadline
/// let admit = Admission::wait(1).unwrap().admit_before(Instant::from_origin(Duration::from_millis(5)));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoClock;

impl Clock for NoClock {
    type Sleep = core::future::Pending<()>;

    fn now(&self) -> Instant {
        Instant::default()
    }

    fn sleep_until(&self, _deadline: Instant) -> Self::Sleep {
        core::future::pending()
    }
}
