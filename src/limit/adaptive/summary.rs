//! What a window of finished calls saw, in a form that can be sent, merged
//! and fed to an algorithm: the unit of the windowed limits, and of a fleet
//! limit that aggregates the reports of many isolates.

use super::{Outcome, Sample};
use core::fmt;
use core::time::Duration;

/// Counts and RTT statistics of a set of finished calls.
///
/// Only *served* calls contribute RTTs ([`Outcome`]); dropped ones are
/// counted. Summaries [`merge`](Self::merge): two summaries of disjoint
/// sets of calls merge into the summary of their union, so the reports of
/// many isolates (or of successive periods) add up to one window that an
/// algorithm takes with
/// [`WindowLimit::on_window`](super::WindowLimit::on_window).
///
/// ```
/// use edgeshed::limit::adaptive::{Outcome, WindowSummary};
/// use std::time::Duration;
///
/// let ms = Duration::from_millis;
/// let mut one = WindowSummary::default();
/// one.record(Outcome::Served, ms(20), 4);
/// one.record(Outcome::Dropped, ms(1), 5); // counted, no RTT
/// let mut other = WindowSummary::default();
/// other.record(Outcome::Served, ms(40), 2);
/// other.record(Outcome::Ignored, ms(900), 2); // not counted at all
/// one.merge(&other);
/// assert_eq!((one.served(), one.dropped()), (2, 1));
/// assert_eq!(one.mean_rtt(), Some(ms(30)));
/// assert_eq!((one.min_rtt(), one.max_rtt()), (Some(ms(20)), Some(ms(40))));
/// assert_eq!(one.max_in_flight(), 5);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowSummary {
    served: u64,
    dropped: u64,
    // Nanoseconds in u64 (584 years of RTT), not `Duration`: exact, and
    // about a third of the code in the wasm builds.
    rtt_total: u64,
    rtt_squares: f64,
    min_rtt: u64,
    max_rtt: u64,
    max_in_flight: usize,
}

impl Default for WindowSummary {
    /// No calls.
    fn default() -> Self {
        Self {
            served: 0,
            dropped: 0,
            rtt_total: 0,
            rtt_squares: 0.0,
            min_rtt: u64::MAX,
            max_rtt: 0,
            max_in_flight: 0,
        }
    }
}

/// `duration` in nanoseconds, saturating at `u64::MAX`.
fn nanos(duration: Duration) -> u64 {
    duration
        .as_secs()
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::from(duration.subsec_nanos()))
}

impl WindowSummary {
    /// A summary from its parts, as another isolate reported them (the
    /// getters of the same names give them). Refuses parts that no set of
    /// calls can have, naming the first one at fault: RTT statistics
    /// without served calls (or none with), `min_rtt > max_rtt`, a total
    /// outside `served × [min_rtt, max_rtt]`, or a negative or non-finite
    /// `rtt_squares`.
    pub fn from_parts(
        served: u64,
        dropped: u64,
        rtt_total: Duration,
        rtt_squares: f64,
        min_rtt: Option<Duration>,
        max_rtt: Option<Duration>,
        max_in_flight: usize,
    ) -> Result<Self, InvalidSummary> {
        if !rtt_squares.is_finite() || rtt_squares < 0.0 {
            return Err(InvalidSummary("rtt_squares must be finite and at least 0"));
        }
        let total = nanos(rtt_total);
        let (min, max) = match (served, min_rtt, max_rtt) {
            (0, None, None) if total == 0 && rtt_squares == 0.0 => (u64::MAX, 0),
            (0, _, _) => return Err(InvalidSummary("RTT statistics given with served = 0")),
            (_, Some(min), Some(max)) if min <= max => {
                let (min, max) = (nanos(min), nanos(max));
                let low = u128::from(min) * u128::from(served);
                let high = u128::from(max) * u128::from(served);
                if !(low..=high).contains(&u128::from(total)) {
                    return Err(InvalidSummary(
                        "rtt_total must lie within served × [min_rtt, max_rtt]",
                    ));
                }
                (min, max)
            }
            (_, Some(_), Some(_)) => return Err(InvalidSummary("min_rtt exceeds max_rtt")),
            _ => {
                return Err(InvalidSummary(
                    "min_rtt and max_rtt are required when served > 0",
                ))
            }
        };
        Ok(Self {
            served,
            dropped,
            rtt_total: total,
            rtt_squares,
            min_rtt: min,
            max_rtt: max,
            max_in_flight,
        })
    }

    /// Adds one finished call: `outcome` as classified, its round-trip time
    /// and the calls in flight when it started (itself included).
    /// `Ignored` calls change nothing.
    pub fn record(&mut self, outcome: Outcome, rtt: Duration, in_flight: usize) {
        match outcome {
            Outcome::Ignored => return,
            Outcome::Dropped => self.dropped = self.dropped.saturating_add(1),
            Outcome::Served => {
                let rtt = nanos(rtt);
                self.served = self.served.saturating_add(1);
                self.rtt_total = self.rtt_total.saturating_add(rtt);
                let secs = rtt as f64 / 1e9;
                self.rtt_squares += secs * secs;
                self.min_rtt = self.min_rtt.min(rtt);
                self.max_rtt = self.max_rtt.max(rtt);
            }
        }
        self.max_in_flight = self.max_in_flight.max(in_flight);
    }

    /// Adds one [`Sample`] (served or dropped, as it says).
    pub fn add(&mut self, sample: &Sample) {
        let outcome = if sample.dropped() {
            Outcome::Dropped
        } else {
            Outcome::Served
        };
        self.record(outcome, sample.rtt(), sample.in_flight());
    }

    /// Adds the calls `other` summarises: counts and RTT totals add up,
    /// the RTT extremes and `max_in_flight` are the larger (smaller) of the
    /// two. For summaries of *different* isolates `max_in_flight` is then
    /// the busiest isolate's, not the fleet's: set the fleet's own figure
    /// with [`with_max_in_flight`](Self::with_max_in_flight) if it is known.
    pub fn merge(&mut self, other: &WindowSummary) {
        self.served = self.served.saturating_add(other.served);
        self.dropped = self.dropped.saturating_add(other.dropped);
        self.rtt_total = self.rtt_total.saturating_add(other.rtt_total);
        self.rtt_squares += other.rtt_squares;
        self.min_rtt = self.min_rtt.min(other.min_rtt);
        self.max_rtt = self.max_rtt.max(other.max_rtt);
        self.max_in_flight = self.max_in_flight.max(other.max_in_flight);
    }

    /// The same summary with `max_in_flight` replaced.
    pub const fn with_max_in_flight(mut self, max_in_flight: usize) -> Self {
        self.max_in_flight = max_in_flight;
        self
    }

    /// Served calls.
    pub const fn served(&self) -> u64 {
        self.served
    }

    /// Dropped calls.
    pub const fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Served and dropped calls together.
    pub const fn count(&self) -> u64 {
        self.served.saturating_add(self.dropped)
    }

    /// Whether no call was recorded.
    pub const fn is_empty(&self) -> bool {
        self.count() == 0
    }

    /// The sum of the served calls' RTTs.
    pub const fn rtt_total(&self) -> Duration {
        Duration::from_nanos(self.rtt_total)
    }

    /// The mean RTT of the served calls (`None` without any).
    pub fn mean_rtt(&self) -> Option<Duration> {
        (self.served > 0).then(|| Duration::from_nanos(self.rtt_total / self.served))
    }

    /// The mean RTT in seconds, for the algorithms' arithmetic.
    pub(crate) fn mean_secs(&self) -> Option<f64> {
        (self.served > 0).then(|| self.rtt_total as f64 / 1e9 / self.served as f64)
    }

    /// The sum of the squares of the served calls' RTTs, in seconds².
    pub const fn rtt_squares(&self) -> f64 {
        self.rtt_squares
    }

    /// The standard error of [`mean_rtt`](Self::mean_rtt) relative to it
    /// (`σ / (√served × mean)`): how far the mean of the window may lie
    /// from the true mean by chance. `None` with fewer than two served calls.
    pub fn relative_error(&self) -> Option<f64> {
        if self.served < 2 {
            return None;
        }
        let n = self.served as f64;
        let mean = self.mean_secs()?;
        if mean <= 0.0 {
            return Some(0.0);
        }
        let variance = ((self.rtt_squares - n * mean * mean) / (n - 1.0)).max(0.0);
        Some((variance / n).sqrt() / mean)
    }

    /// The lowest served RTT.
    pub const fn min_rtt(&self) -> Option<Duration> {
        if self.served == 0 {
            None
        } else {
            Some(Duration::from_nanos(self.min_rtt))
        }
    }

    /// The highest served RTT.
    pub const fn max_rtt(&self) -> Option<Duration> {
        if self.served == 0 {
            None
        } else {
            Some(Duration::from_nanos(self.max_rtt))
        }
    }

    /// The highest served RTT in seconds (0 without any).
    pub(crate) fn max_secs(&self) -> f64 {
        if self.served == 0 {
            0.0
        } else {
            self.max_rtt as f64 / 1e9
        }
    }

    /// The most calls in flight at the start of any recorded call.
    pub const fn max_in_flight(&self) -> usize {
        self.max_in_flight
    }
}

/// [`WindowSummary::from_parts`] refused its parts; the message says why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidSummary(&'static str);

impl fmt::Display for InvalidSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid window summary: {}", self.0)
    }
}

impl std::error::Error for InvalidSummary {}
