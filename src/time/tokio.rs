//! [`TokioClock`]: tokio's timer behind edgeshed's [`Clock`].

use super::{Clock, Instant, RealClock};

/// tokio's time as a [`Clock`] (feature `tokio`): `now` reads
/// `tokio::time::Instant::now()`, sleeps are `tokio::time::Sleep`.
///
/// Instants count from the moment the clock was created; clones share that
/// origin. It follows tokio's clock, so a runtime started with
/// `start_paused = true` (tokio's `test-util`) drives it deterministically.
/// Create and poll it inside a tokio runtime with the timer enabled
/// (`enable_time()`, or `#[tokio::main]`).
///
/// ```
/// use edgeshed::limit::ConcurrencyLimitLayer;
/// use edgeshed::time::TokioClock;
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), edgeshed::BoxError> {
/// let layer = ConcurrencyLimitLayer::new(6)?
///     .queue(12, Duration::from_millis(20))?
///     .clock(TokioClock::new());
/// # let _ = layer;
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct TokioClock {
    origin: tokio::time::Instant,
    /// The wall-clock time at `origin` (since the Unix epoch).
    wall_origin: Option<core::time::Duration>,
}

impl TokioClock {
    /// A clock whose origin is now (on tokio's clock).
    pub fn new() -> Self {
        let wall_origin = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok();
        Self {
            origin: tokio::time::Instant::now(),
            wall_origin,
        }
    }

    /// The tokio instant that `instant` of this clock stands for.
    pub fn to_tokio(&self, instant: Instant) -> tokio::time::Instant {
        self.origin + instant.since_origin()
    }
}

impl Default for TokioClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for TokioClock {
    type Sleep = tokio::time::Sleep;

    fn now(&self) -> Instant {
        Instant::from_origin(tokio::time::Instant::now().saturating_duration_since(self.origin))
    }

    /// The wall-clock time when the clock was created, plus tokio's time
    /// since: a paused test runtime moves it too.
    fn wall_time(&self) -> Option<core::time::Duration> {
        let origin = self.wall_origin?;
        Some(origin.saturating_add(self.now().since_origin()))
    }

    fn sleep_until(&self, deadline: Instant) -> tokio::time::Sleep {
        tokio::time::sleep_until(self.to_tokio(deadline))
    }
}

/// tokio's sleeps complete: it may arm queue timeouts and deadlines.
impl RealClock for TokioClock {}
