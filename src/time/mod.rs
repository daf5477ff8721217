//! Injected time: an [`Instant`], the [`Clock`] trait and the clocks that ship.
//!
//! The core never reads the system time itself (`std::time::Instant::now()`
//! panics on `wasm32-unknown-unknown`). Whatever needs time — queue timeouts,
//! deadlines — receives a [`Clock`]: JavaScript timers on wasm, a runtime's
//! timer natively, or the [`ManualClock`] in tests.

mod manual;

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
/// line.
pub trait Clock: Clone {
    /// The future returned by [`sleep_until`](Clock::sleep_until).
    type Sleep: Future<Output = ()>;

    /// The current time.
    fn now(&self) -> Instant;

    /// A future that completes once [`now`](Clock::now) has reached `deadline`.
    fn sleep_until(&self, deadline: Instant) -> Self::Sleep;
}

/// The clock of policies that never need a timer (wait and shed).
///
/// Its time stands still at the origin and its sleeps never complete. The
/// type exists so that limiters without timeouts need no real clock; the
/// constructors that arm timers ask for a real one.
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
