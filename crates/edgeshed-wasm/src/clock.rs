//! Time from the JavaScript host: [`JsClock`] (an edgeshed `Clock`) and
//! its sleeps ([`JsSleep`], in `sleep.rs`).

use crate::host::js::{now_millis, wall_millis};
use crate::sleep::JsSleep;
use core::time::Duration;
use edgeshed::time::{Clock, Instant};

/// Time from the JavaScript host: `performance.now()` (or `Date.now()`
/// where there is no `performance`) and `setTimeout` timers.
///
/// In workerd both clocks advance only across I/O, which is exactly what
/// timeouts and deadlines need there.
#[derive(Clone, Copy, Debug, Default)]
pub struct JsClock;

impl edgeshed::time::RealClock for JsClock {}

impl Clock for JsClock {
    type Sleep = JsSleep;

    fn now(&self) -> Instant {
        Instant::from_origin(millis_to_duration(now_millis()))
    }

    fn sleep_until(&self, deadline: Instant) -> JsSleep {
        JsSleep::at(deadline.since_origin().as_secs_f64() * 1000.0)
    }

    /// `performance.timeOrigin + performance.now()` (or `Date.now()`):
    /// isolates agree on it, so the adaptive limits' drains coincide.
    fn wall_time(&self) -> Option<Duration> {
        // Whole milliseconds: drains are scheduled in whole seconds.
        let millis = wall_millis();
        (millis.is_finite() && millis > 0.0).then(|| Duration::from_millis(millis as u64))
    }
}

/// A host reading in ms as a duration, whatever the host returns: NaN and
/// negative readings count as 0, and a reading too large (or infinite)
/// as the largest duration (`Duration::from_secs_f64` would panic).
fn millis_to_duration(millis: f64) -> Duration {
    if millis.is_nan() || millis <= 0.0 {
        return Duration::ZERO;
    }
    Duration::try_from_secs_f64(millis / 1000.0).unwrap_or(Duration::MAX)
}
