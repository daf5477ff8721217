//! The no-load RTT: the minimum of the last few drains' means.

use crate::limit::adaptive::WindowSummary;
use core::time::Duration;

/// How many drains the no-load RTT remembers.
const DRAINS: usize = 3;

/// The no-load round-trip time of an origin, as drains measured it.
///
/// A *drain* is a short period in which every limiter in front of the
/// origin lowers its limit at once (they agree on when, by the wall clock:
/// see [`DrainSchedule`](super::DrainSchedule)), so the origin's queue
/// really empties and the mean RTT of the calls admitted then is the
/// origin's own service time. The baseline remembers the last three drains
/// and is the **lowest of their means**, pooled with the others that agree
/// with it:
///
/// * a drain that failed to drain (another client kept the origin busy, a
///   burst arrived) measures high, and cannot raise the baseline while an
///   earlier, lower drain is remembered;
/// * an origin that became slower for good is learned after three drains,
///   once every lower mean has left the memory;
/// * the drains whose means lie within two standard errors of the lowest
///   one are pooled (their calls averaged together): with service times
///   that vary, the lowest of three noisy means alone lies about 0.85
///   standard errors below the true mean, and limiters that each kept their
///   own lowest mean would disagree on the origin's queue by that much;
/// * nothing else moves it: neither a window of this limiter (its RTT
///   includes the queues of every client) nor an under-used window.
///
/// This replaces the published estimators: Netflix's Gradient2 follows a
/// long exponential average of all RTTs, which rises with a sustained
/// queue; its Vegas (after TCP Vegas) keeps the lowest single RTT and
/// periodically *replaces* it by the next sample, which under load includes
/// the queue — with several clients the estimate ratchets upwards.
///
/// ```
/// use edgeshed::limit::adaptive::{Baseline, Outcome, WindowSummary};
/// use std::time::Duration;
///
/// let ms = Duration::from_millis;
/// let drain = |rtt| {
///     let mut drained = WindowSummary::default();
///     (0..8).for_each(|_| drained.record(Outcome::Served, ms(rtt), 1));
///     drained
/// };
/// let mut baseline = Baseline::new();
/// assert_eq!(baseline.no_load(), None);
/// baseline.record_drain(&drain(20));
/// baseline.record_drain(&drain(60)); // a drain that did not drain
/// assert_eq!(baseline.no_load(), Some(ms(20)));
/// baseline.record_drain(&drain(30));
/// baseline.record_drain(&drain(30)); // the 20 ms drain is forgotten
/// assert_eq!(baseline.no_load(), Some(ms(30)));
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Baseline {
    /// Per drain: served calls (0: none yet), mean RTT in seconds, and the
    /// relative standard error of that mean.
    drains: [(f64, f64, f64); DRAINS],
    next: usize,
    /// The estimate, computed when a drain is recorded.
    no_load: Option<f64>,
}

impl Baseline {
    /// No drain measured yet.
    pub const fn new() -> Self {
        Self {
            drains: [(0.0, 0.0, 0.0); DRAINS],
            next: 0,
            no_load: None,
        }
    }

    /// The no-load RTT: the lowest of the last three drain means, pooled
    /// with those that agree with it; `None` before the first drain.
    pub fn no_load(&self) -> Option<Duration> {
        self.no_load
            .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
    }

    /// [`no_load`](Self::no_load) in seconds.
    pub(crate) fn no_load_secs(&self) -> Option<f64> {
        self.no_load
    }

    /// How many drains are remembered (at most three).
    pub fn drains(&self) -> usize {
        self.drains
            .iter()
            .filter(|(served, _, _)| *served > 0.0)
            .count()
    }

    /// Remembers the served calls of a drain (forgetting the oldest of the
    /// three). A drain without served calls changes nothing.
    pub fn record_drain(&mut self, drained: &WindowSummary) {
        let Some(mean) = drained.mean_secs() else {
            return;
        };
        let error = drained.relative_error().unwrap_or(0.0);
        if let Some(slot) = self.drains.get_mut(self.next) {
            *slot = (drained.served() as f64, mean, error);
        }
        self.next = (self.next + 1) % DRAINS;
        self.no_load = self.pooled();
    }

    /// The lowest mean, pooled (weighted by calls) with the means within
    /// two standard errors of it.
    fn pooled(&self) -> Option<f64> {
        let remembered = self.drains.iter().filter(|(served, _, _)| *served > 0.0);
        let (_, low, low_error) =
            remembered
                .clone()
                .fold((0.0, f64::INFINITY, 0.0), |low, drain| {
                    if drain.1 < low.1 {
                        *drain
                    } else {
                        low
                    }
                });
        if !low.is_finite() {
            return None;
        }
        let (mut calls, mut total) = (0.0, 0.0);
        for &(served, mean, error) in remembered {
            let apart = (low_error * low_error + error * error).sqrt() * 2.0;
            if mean <= low * (1.0 + apart) {
                calls += served;
                total += served * mean;
            }
        }
        Some(total / calls)
    }
}
