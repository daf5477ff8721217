//! Drains synchronised on the wall clock, which measure the no-load RTT.

use super::active_drain::{Active, Judged};
use super::baseline::Baseline;
use super::finished_call::FinishedCall;
use core::time::Duration;

/// When the limiters of a fleet drain: at every multiple of a period on the
/// **wall clock**.
///
/// Isolates share nothing, but they share the time of day (`Date.now()`):
/// a limiter drains in the first call it finishes after each multiple of
/// [`period`](Self::period) since the Unix epoch, so every limiter in front
/// of an origin drains at the same moment, the origin's queue empties, and
/// each measures the origin's own latency. A drain lowers the limit for
/// about two round trips, so the period is long against the RTT: the
/// smallest power of two seconds at least 256 × the no-load RTT, within
/// [1 s, 128 s] (8 s at 20 ms, 64 s at 200 ms). Powers of two keep two
/// limiters that chose different periods aligned: every boundary of the
/// longer one is a boundary of the shorter one.
///
/// Until three drains are remembered, a limiter drains at the multiples of
/// a shorter [`startup_period`](Self::startup_period) (32 × the RTT, at
/// least 1 s): limiters that started together (a deployment) then measure
/// together again within a second or two, whatever queue their first
/// measurement saw.
///
/// ```
/// use edgeshed::limit::adaptive::DrainSchedule;
/// use std::time::Duration;
///
/// let ms = Duration::from_millis;
/// assert_eq!(DrainSchedule::period(ms(20)), Duration::from_secs(8));
/// assert_eq!(DrainSchedule::period(ms(1)), Duration::from_secs(1));
/// let eight = DrainSchedule::period(ms(20));
/// assert_eq!(DrainSchedule::epoch(Duration::from_secs(17), eight), 2);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct DrainSchedule(());

impl DrainSchedule {
    /// The time between two drains for an origin whose no-load RTT is
    /// `no_load`.
    pub fn period(no_load: Duration) -> Duration {
        Duration::from_secs(power_of_two(no_load.as_secs_f64(), 256.0))
    }

    /// The period between the first drains of a limiter.
    pub fn startup_period(no_load: Duration) -> Duration {
        Duration::from_secs(power_of_two(no_load.as_secs_f64(), 32.0))
    }

    /// Which period the wall-clock time `wall` (since the Unix epoch, or
    /// since the clock's origin) falls in; a drain starts when it changes.
    pub fn epoch(wall: Duration, period: Duration) -> u64 {
        // Whole seconds suffice: periods are whole seconds.
        wall.as_secs() / period.as_secs().max(1)
    }
}

/// The smallest power of two seconds at least `rounds × no_load` seconds,
/// within [1, 128].
fn power_of_two(no_load: f64, rounds: f64) -> u64 {
    let wanted = no_load * rounds;
    let mut period = 1u64;
    while (period as f64) < wanted && period < 128 {
        period *= 2;
    }
    period
}

/// The longest period, in seconds, before the first drain after the warm
/// start: a fleet whose initial limits were above the capacity stays
/// overloaded until then (4 s: a new isolate of a healthy origin serves at
/// its initial limit or above for its first seconds, at any RTT).
const FIRST_DRAIN_WITHIN: u64 = 4;
/// Fewest served calls that make a drain's mean worth keeping.
const MIN_DRAIN_SAMPLES: u64 = 3;

/// Where a limiter stands in its drains. Times are seconds on the clock of
/// the samples (f64: a third of the code of `Instant` arithmetic in the
/// wasm builds).
#[derive(Clone, Debug)]
pub(crate) enum Drains {
    /// No drain measured yet: the next finished call starts one.
    Startup,
    /// Between drains; the last one ran in `epoch`.
    Idle { epoch: u64 },
    /// Draining: calls started from `measure_from` measure, until `until`.
    Active(Active),
}

/// The levels a drain may hold.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Levels {
    /// A periodic drain's.
    pub(crate) drain: f64,
    /// The warm start's: the initial limit, where the first calls run.
    pub(crate) warm_start: f64,
    /// The lowest that cuts inside a drain may reach.
    pub(crate) min: f64,
}

/// What a finished call meant for the drains.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Step {
    /// No drain: the call belongs to the limit's window.
    Normal,
    /// A drain is on (or started with this call): hold the drain limit.
    Draining,
    /// The drain ended with this call: back to the limit (`seed`: it was
    /// the warm start, which measured this mean RTT at the initial limit;
    /// `cuts`: how many times drops or a queue it did not drain cut it by
    /// the drop backoff, which the limit takes too).
    Ended { seed: Option<f64>, cuts: u32 },
}

impl Drains {
    /// Takes `call` into account. `flush`: how long the calls already
    /// queued need to finish (the current RTT, seconds); `levels`: what a
    /// drain may hold. Records the drain's calls in `baseline` when it ends.
    pub(crate) fn observe(
        &mut self,
        call: &FinishedCall,
        flush: f64,
        levels: Levels,
        baseline: &mut Baseline,
    ) -> Step {
        let now = call.completed;
        let epoch = |baseline: &Baseline| {
            let Some(no_load) = baseline.no_load_secs() else {
                // After the warm start, before any drain: the first drain
                // comes at the startup period of the seed (its RTT), but at
                // most FIRST_DRAIN_WITHIN later, whatever the seed (which a
                // queue may have made long).
                let period = power_of_two(flush, 32.0).min(FIRST_DRAIN_WITHIN);
                return (call.wall / period as f64) as u64;
            };
            let rounds = if baseline.drains() < 3 { 32.0 } else { 256.0 };
            (call.wall / power_of_two(no_load, rounds) as f64) as u64
        };
        match self {
            Self::Startup => {
                *self = Self::start(now, flush, levels.warm_start, true);
                Step::Draining
            }
            Self::Idle { epoch: last } if *last == epoch(baseline) => Step::Normal,
            Self::Idle { .. } => {
                *self = Self::start(now, flush, levels.drain, false);
                Step::Draining
            }
            Self::Active(active) => {
                let judged = active.observe(call, flush, levels.min, baseline.no_load_secs());
                let cuts = match judged {
                    Judged::Draining => return Step::Draining,
                    Judged::Done { cuts } => cuts,
                };
                let enough = active.window.served() >= MIN_DRAIN_SAMPLES;
                if active.startup {
                    // The warm start's mean is a seed, not a drain: measured
                    // at the initial limit, it stays out of the baseline's
                    // memory (which pools its drains).
                    let seed = active.window.mean_secs().filter(|_| enough);
                    *self = match seed {
                        None => Self::Startup,
                        Some(_) => Self::Idle {
                            epoch: epoch(baseline),
                        },
                    };
                    return Step::Ended { seed, cuts: 0 };
                }
                if enough && !active.undrained {
                    baseline.record_drain(&active.window);
                }
                *self = Self::Idle {
                    epoch: epoch(baseline),
                };
                Step::Ended { seed: None, cuts }
            }
        }
    }

    /// Whether a drain is on.
    pub(crate) fn active(&self) -> bool {
        matches!(self, Self::Active(_))
    }

    /// The limit a drain holds, while one is on.
    pub(crate) fn limit(&self) -> Option<f64> {
        match self {
            Self::Active(active) => Some(active.limit),
            _ => None,
        }
    }

    fn start(now: f64, flush: f64, limit: f64, startup: bool) -> Self {
        Self::Active(Active::new(now, flush, limit, startup))
    }
}
