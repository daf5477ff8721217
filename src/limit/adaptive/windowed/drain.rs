//! Drains synchronised on the wall clock, which measure the no-load RTT.

use super::baseline::Baseline;
use crate::limit::adaptive::{Sample, WindowSummary};
use crate::time::Instant;
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
        Self::power_of_two(no_load, 256.0)
    }

    /// The period between the first drains of a limiter.
    pub fn startup_period(no_load: Duration) -> Duration {
        Self::power_of_two(no_load, 32.0)
    }

    fn power_of_two(no_load: Duration, rounds: f64) -> Duration {
        let wanted = no_load.as_secs_f64() * rounds;
        let mut period = 1u64;
        while (period as f64) < wanted && period < 128 {
            period *= 2;
        }
        Duration::from_secs(period)
    }

    /// Which period the wall-clock time `wall` (since the Unix epoch, or
    /// since the clock's origin) falls in; a drain starts when it changes.
    pub fn epoch(wall: Duration, period: Duration) -> u64 {
        let period = period.as_millis().max(1);
        u64::try_from(wall.as_millis() / period).unwrap_or(u64::MAX)
    }
}

/// Served calls a drain averages at least (fewer if its time runs out)...
const DRAIN_SAMPLES: u64 = 8;
/// ...and more, up to this many, while the relative standard error of
/// their mean exceeds `DRAIN_ERROR`: the minimum of three noisy means lies
/// about 0.85 standard errors below the true mean.
const MAX_DRAIN_SAMPLES: u64 = 96;
const DRAIN_ERROR: f64 = 0.015;
/// The most round trips a drain measures for (its cost, at small limits).
const MAX_DRAIN_ROUNDS: u64 = 32;
/// Fewest served calls that make a drain's mean worth keeping.
const MIN_DRAIN_SAMPLES: u64 = 3;

/// Where a limiter stands in its drains.
#[derive(Clone, Debug)]
pub(crate) enum Drains {
    /// No drain measured yet: the next finished call starts one.
    Startup,
    /// Between drains; the last one ran in `epoch`.
    Idle { epoch: u64 },
    /// Draining: calls started from `measure_from` measure, until `until`.
    Active(Active),
}

#[derive(Clone, Debug)]
pub(crate) struct Active {
    startup: bool,
    limit: usize,
    measure_from: Instant,
    /// Set once enough calls were measured: calls started before it still
    /// count (the longest ones finish last; leaving them out would bias the
    /// mean low), calls started later do not.
    closing: Option<Instant>,
    until: Instant,
    window: WindowSummary,
}

/// What a finished call meant for the drains.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// No drain: the call belongs to the limit's window.
    Normal,
    /// A drain is on (or started with this call): hold the drain limit.
    Draining,
    /// The drain ended with this call: back to the limit.
    Ended,
}

impl Drains {
    /// Takes `sample`, finished at wall-clock `wall`, into account.
    /// `flush`: how long the calls already queued need to finish (the
    /// current RTT); `limits`: what a periodic drain holds, and what the
    /// startup drain holds (the minimum). Records the drain's calls in
    /// `baseline` when it ends.
    pub(crate) fn observe(
        &mut self,
        sample: &Sample,
        wall: Duration,
        flush: Duration,
        limits: (usize, usize),
        baseline: &mut Baseline,
    ) -> Step {
        let now = sample.completed();
        let epoch = |baseline: &Baseline| {
            let no_load = baseline.no_load().unwrap_or(flush);
            let period = if baseline.drains() < 3 {
                DrainSchedule::startup_period(no_load)
            } else {
                DrainSchedule::period(no_load)
            };
            DrainSchedule::epoch(wall, period)
        };
        match self {
            Self::Startup => {
                *self = Self::start(now, flush, limits.1, true);
                Step::Draining
            }
            Self::Idle { epoch: last } if *last == epoch(baseline) => Step::Normal,
            Self::Idle { .. } => {
                *self = Self::start(now, flush, limits.0, false);
                Step::Draining
            }
            Self::Active(active) => {
                let started = sample.started();
                let before_close = active.closing.is_none_or(|closing| started < closing);
                if !sample.dropped() && started >= active.measure_from && before_close {
                    active.window.add(sample);
                }
                let window = &active.window;
                if active.closing.is_none() {
                    let noisy = window.relative_error().is_none_or(|e| e > DRAIN_ERROR);
                    let more = window.served() < DRAIN_SAMPLES
                        || (noisy && window.served() < MAX_DRAIN_SAMPLES);
                    if !more {
                        active.closing = Some(now);
                    }
                }
                // Done once the calls started before closing had the time of
                // the longest measured one to finish (or the drain ran out).
                let finished = active.closing.is_some_and(|closing| {
                    now >= closing.saturating_add(window.max_rtt().unwrap_or_default())
                });
                if !finished && now < active.until {
                    return Step::Draining;
                }
                if active.window.served() >= MIN_DRAIN_SAMPLES {
                    baseline.record_drain(&active.window);
                }
                *self = if active.startup && baseline.no_load().is_none() {
                    Self::Startup
                } else {
                    Self::Idle {
                        epoch: epoch(baseline),
                    }
                };
                Step::Ended
            }
        }
    }

    /// Whether a drain is on.
    pub(crate) fn active(&self) -> bool {
        matches!(self, Self::Active(_))
    }

    /// The limit a drain holds, while one is on.
    pub(crate) fn limit(&self) -> Option<usize> {
        match self {
            Self::Active(active) => Some(active.limit),
            _ => None,
        }
    }

    fn start(now: Instant, flush: Duration, limit: usize, startup: bool) -> Self {
        // FIFO at the origin: what was queued when the drain began is done
        // about one current RTT later (a quarter more for jitter).
        let flush = flush.mul_f64(1.25);
        let measure_from = now.saturating_add(flush);
        let rounds =
            (MAX_DRAIN_SAMPLES.div_ceil(limit.max(1) as u64) + 2).min(MAX_DRAIN_ROUNDS) as u32;
        let until = measure_from.saturating_add(flush.saturating_mul(rounds));
        Self::Active(Active {
            startup,
            limit,
            measure_from,
            closing: None,
            until,
            window: WindowSummary::default(),
        })
    }
}
