//! [`QueueWait::Auto`](super::QueueWait::Auto): a queue wait that follows
//! the origin.
//!
//! A call admitted after a long wait has already cost its client most of
//! its patience, and a burst's excess only waits to time out. So under the
//! auto rule a call that must wait is refused at once (503
//! `queue_timeout`) when its expected wait is longer than the larger of
//! codel's target and one service time:
//!
//! - its *expected wait* is its place in the queue over the measured
//!   completion rate λ: `(ahead + 1) / λ`;
//! - one *service time* is, by Little's law, the calls in flight over λ:
//!   `in_flight / λ`.
//!
//! So a call waits only while at most `max(in_flight, target × λ)` calls are
//! ahead of it: at saturation, about one limit's worth, a queue the origin
//! empties in one service time. An admitted call then waits at most about
//! one service time, close to the unloaded latency, and the rest of a burst
//! gets its answer at once instead of after the queue timeout. Nothing is
//! timed per call: λ comes from the admission's own counters (calls
//! admitted minus calls in flight), read at the arrivals that must wait —
//! frequent when it matters, absent when it does not. Until the first
//! completions are measured nobody is refused by the rule; the queue timeout
//! still bounds every wait.
//!
//! Where it ranks: the calls ahead of an arrival are the waiters of higher
//! criticalities, plus those of its own criticality that fair queueing
//! serves first — about its own key's waiters times the keys waiting there
//! (round robin), never more than all of them; a quiet key's call is not
//! refused for a noisy key's queue.

use crate::time::Instant;
use core::time::Duration;

/// A completion window closes after this long even with few completions.
const MAX_WINDOW: Duration = Duration::from_millis(250);
/// The weight of a new window in the smoothed rate.
const NEW_WEIGHT: f64 = 0.3;

/// The measured completion rate.
#[derive(Debug, Default)]
pub(crate) struct WaitModel {
    /// The current window's start and the completions counted then.
    mark: Option<(Instant, u64)>,
    /// Completions per second, smoothed over windows.
    rate: Option<f64>,
}

impl WaitModel {
    /// Counts `completed` calls (so far, in total) at `now`; a window closes
    /// once it saw `limit` completions or lasted [`MAX_WINDOW`].
    pub(crate) fn observe(&mut self, now: Instant, completed: u64, limit: usize) {
        let Some((start, before)) = self.mark else {
            self.mark = Some((now, completed));
            return;
        };
        let span = now.saturating_duration_since(start);
        let done = completed.saturating_sub(before);
        if span.is_zero() || (done < limit.max(1) as u64 && span < MAX_WINDOW) {
            return;
        }
        let rate = done as f64 / span.as_secs_f64();
        self.rate = Some(match self.rate {
            Some(old) => old + NEW_WEIGHT * (rate - old),
            None => rate,
        });
        self.mark = Some((now, completed));
    }

    /// Whether a call with `ahead` calls before it in the queue, while
    /// `in_flight` calls run, would wait longer than the larger of `target`
    /// and one service time.
    pub(crate) fn too_long(&self, ahead: usize, in_flight: usize, target: Duration) -> bool {
        let Some(rate) = self.rate else {
            return false;
        };
        let allowed = (in_flight as f64).max(target.as_secs_f64() * rate);
        (ahead + 1) as f64 > allowed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_of_one_service_time_is_allowed_and_no_more() {
        let ms = Duration::from_millis;
        let mut model = WaitModel::default();
        let at = |t| Instant::from_origin(ms(t));
        model.observe(at(0), 0, 4);
        assert!(
            !model.too_long(100, 4, ms(5)),
            "nothing measured: nobody refused"
        );
        // 4 slots, 50 ms each: 80 completions a second.
        model.observe(at(50), 4, 4);
        assert!(
            !model.too_long(3, 4, ms(5)),
            "4th in line: one service time"
        );
        assert!(model.too_long(4, 4, ms(5)), "5th in line: longer");
        // A long target allows more: 200 ms x 80/s = 16.
        assert!(!model.too_long(15, 4, ms(200)));
        assert!(model.too_long(16, 4, ms(200)));
    }
}
