//! The windowed delay-based limits: a windowing rule, a no-load baseline
//! and a [`WindowRule`] that turns each window into a new limit.

mod baseline;
mod dither;
mod drain;
mod rule;

pub use baseline::Baseline;
pub use drain::DrainSchedule;
pub(crate) use rule::integrate;
pub use rule::WindowRule;

use super::{Bounds, Limit, Sample, WindowLimit, WindowSummary};
use crate::time::Instant;
use core::time::Duration;
use dither::Dither;
use drain::{Drains, Step};

/// A delay-based limit after Netflix's `WindowedLimit` decorator: samples
/// are gathered into windows, and a [`WindowRule`] moves the limit once per
/// window. What the decorator adds to a rule, shared by [`Gradient2`](super::Gradient2)
/// and [`Vegas`](super::Vegas):
///
/// * **Windows of fresh calls.** A window holds the calls *started* after
///   the previous window closed (at least `max(limit, 10)` of them), so
///   each window sees the limit the previous one chose; calls admitted
///   under an older limit count in no window (as TCP reduces at most once
///   per window, RFC 6582). Netflix closes windows by time; counting calls
///   ties a window to about one round trip of this limiter.
/// * **One outcome contract.** Only served calls inform the RTT. A window
///   with drops multiplies the limit by 0.8 (once, however many drops) and
///   never moves the baseline.
/// * **A no-load RTT from synchronised drains** ([`Baseline`],
///   [`DrainSchedule`]): the first finished call starts a drain, and so
///   does the first call after each wall-clock period; during a drain the
///   limit is its minimum.
/// * **Slow start** from the initial limit and after a run of drops: the
///   limit doubles per window while the rule sees room, up to the level
///   before the drops (TCP's ssthresh, RFC 5681 §3.1).
/// * **No upward path from under-used windows**: a window whose busiest
///   moment used less than half the limit never raises it (the published
///   rule of both algorithms, kept).
/// * **A real-valued limit, dithered.** The limit applied is `floor(limit +
///   d)` with `d` a low-discrepancy sequence in [0, 1): its mean is the
///   real limit. Small per-isolate shares (8 isolates, 8 slots) are then
///   fractions of a call rather than whole calls that all step at once.
#[derive(Clone, Debug)]
pub struct Windowed<R> {
    bounds: Bounds,
    rule: R,
    limit: f64,
    applied: usize,
    dither: Dither,
    window: WindowSummary,
    since: Option<Instant>,
    opened: Option<Instant>,
    baseline: Baseline,
    lowest_window: Option<Duration>,
    drains: Drains,
    slow_start: bool,
    ssthresh: f64,
    dropping: bool,
    recent_rtt: Option<Duration>,
    /// The last window's measured ratio and busiest moment.
    recent_load: Option<(f64, usize)>,
}

/// The fewest calls in a window.
const MIN_WINDOW: u64 = 8;
/// A window grows past `max(limit, MIN_WINDOW)` calls until the relative
/// standard error of its mean RTT is at most this, or it holds `MAX_WINDOW`.
const WINDOW_ERROR: f64 = 0.03;
/// The most calls a window waits for (`max(limit, MAX_WINDOW)`).
const MAX_WINDOW: u64 = 48;
/// The most round trips a window's growth counts.
const MAX_ROUNDS: f64 = 64.0;
/// The factor a window with drops applies to the limit.
const DROP_BACKOFF: f64 = 0.8;
/// What share of the origin's capacity the fleet keeps in flight during a
/// drain (see [`Windowed::drain_limit`]): below 1 so that the queue empties
/// even where the RTT ratio underestimates the overload.
const DRAIN_DEPTH: f64 = 0.7;

impl<R: WindowRule> Windowed<R> {
    /// `rule` within `bounds`, starting at the initial limit.
    pub fn with_rule(rule: R, bounds: Bounds) -> Self {
        Self {
            bounds,
            rule,
            limit: bounds.initial() as f64,
            applied: bounds.initial(),
            dither: Dither::default(),
            window: WindowSummary::default(),
            since: None,
            opened: None,
            baseline: Baseline::new(),
            lowest_window: None,
            drains: Drains::Startup,
            slow_start: true,
            ssthresh: bounds.max() as f64,
            dropping: false,
            recent_rtt: None,
            recent_load: None,
        }
    }

    /// The rule.
    pub fn rule(&self) -> &R {
        &self.rule
    }

    /// The rule, to tune it.
    pub(crate) fn rule_mut(&mut self) -> &mut R {
        &mut self.rule
    }

    /// The no-load RTT estimate.
    pub fn baseline(&self) -> &Baseline {
        &self.baseline
    }

    /// The real-valued limit the applied one dithers around.
    pub fn real_limit(&self) -> f64 {
        self.limit
    }

    /// Whether a drain holds the limit at its minimum now.
    pub fn draining(&self) -> bool {
        self.drains.active()
    }

    fn apply(&mut self) -> usize {
        self.applied = self.bounds.clamp(self.limit + self.dither.next());
        self.applied
    }

    /// Whether the window holds enough calls to judge by: `max(limit, 8)`,
    /// and more while its mean RTT is too noisy to tell on which side of
    /// the rule's threshold it lies (two standard errors; service times
    /// that vary), up to `max(limit, 48)`. A window with a drop is complete
    /// at the minimum.
    fn complete(&self, window: &WindowSummary) -> bool {
        let limit = self.limit.ceil() as u64;
        let count = window.count();
        if count < limit.max(MIN_WINDOW) {
            return false;
        }
        if window.dropped() > 0 || count >= limit.max(MAX_WINDOW) {
            return true;
        }
        let (Some(error), Some(mean)) = (window.relative_error(), window.mean_rtt()) else {
            return false;
        };
        if error <= WINDOW_ERROR {
            return true;
        }
        let Some(no_load) = self.baseline.no_load().or(self.lowest_window) else {
            return false;
        };
        let ratio = mean.as_secs_f64() / no_load.as_secs_f64().max(1e-9);
        (ratio - self.rule.threshold()).abs() >= 4.0 * error * ratio
    }

    /// The limit a periodic drain holds: 0.7 of what this limiter had in
    /// flight, divided by the last window's RTT ratio. If every limiter of
    /// the fleet does the same, the origin holds about 0.7 of its capacity
    /// whatever the overload was (its concurrency over its capacity is
    /// about that ratio), so its queue empties, while the drain keeps most
    /// of the throughput and measures many calls.
    fn drain_limit(&self) -> usize {
        let (ratio, in_flight) = self.recent_load.unwrap_or((1.0, usize::MAX));
        let used = self.limit.min(in_flight as f64);
        self.bounds.clamp(used * DRAIN_DEPTH / ratio.max(1.0))
    }

    /// The rule applied to one closed window that spanned `span`.
    fn decide(&mut self, window: &WindowSummary, span: Duration) {
        if window.dropped() > 0 {
            let backed_off = self.bounds.clamp_f64(self.limit * DROP_BACKOFF);
            if !self.dropping {
                // The first drop of a run: slow start may return here.
                self.ssthresh = backed_off;
            }
            self.dropping = true;
            self.slow_start = true;
            self.limit = backed_off;
            return;
        }
        self.dropping = false;
        let Some(mean) = window.mean_rtt() else {
            return;
        };
        self.recent_rtt = Some(mean);
        let Some(no_load) = self.baseline.no_load().or(self.lowest_window) else {
            return;
        };
        let measured = mean.as_secs_f64() / no_load.as_secs_f64().max(1e-9);
        self.recent_load = Some((measured, window.max_in_flight()));
        // How far the window's ratio lies from the rule's threshold beyond
        // two standard errors of its mean: within them, the window is taken
        // to lie at the threshold (a noisy origin does not move the limit
        // down by chance).
        let margin = window.relative_error().unwrap_or(0.0) * measured;
        let threshold = self.rule.threshold();
        let ratio = if measured > threshold {
            (measured - margin).max(threshold)
        } else {
            (measured + margin).min(threshold)
        };
        let rounds = (span.as_secs_f64() / mean.as_secs_f64().max(1e-9)).clamp(1.0, MAX_ROUNDS);
        let in_use = window.max_in_flight() as f64 >= self.limit.floor();
        if self.slow_start {
            if self.rule.has_room(ratio) {
                if in_use {
                    self.limit = self.bounds.clamp_f64((self.limit * 2.0).min(self.ssthresh));
                    self.slow_start = self.limit < self.ssthresh;
                }
                return;
            }
            self.slow_start = false;
        }
        let next = self.rule.next(self.limit, ratio, rounds);
        if next <= self.limit || in_use {
            self.limit = self.bounds.clamp_f64(next);
        }
    }
}

impl<R: WindowRule> Limit for Windowed<R> {
    fn bounds(&self) -> Bounds {
        self.bounds
    }

    fn limit(&self) -> usize {
        self.drains.limit().unwrap_or(self.applied)
    }

    fn update(&mut self, sample: &Sample) -> usize {
        let now = sample.completed();
        let wall = sample.wall_completed();
        let flush = self.recent_rtt.unwrap_or_default().max(sample.rtt());
        let limits = (self.drain_limit(), self.bounds.min());
        match (self.drains).observe(sample, wall, flush, limits, &mut self.baseline) {
            Step::Draining => return self.limit(),
            Step::Ended => {
                self.window = WindowSummary::default();
                self.since = Some(now);
                self.opened = Some(now);
                return self.apply();
            }
            Step::Normal => {}
        }
        if self.since.is_none_or(|since| sample.started() >= since) {
            self.window.add(sample);
            if self.complete(&self.window) {
                let window = core::mem::take(&mut self.window);
                let opened = self.opened.unwrap_or(sample.started());
                self.opened = Some(now);
                let before = self.limit;
                self.decide(&window, now.saturating_duration_since(opened));
                if self.limit < before {
                    // Calls admitted under the higher limit say nothing of
                    // the lower one (and drops among them are not new).
                    self.since = Some(now);
                }
            }
        }
        self.apply()
    }
}

impl<R: WindowRule> WindowLimit for Windowed<R> {
    fn on_window(&mut self, window: &WindowSummary, span: Duration) -> usize {
        if let Some(mean) = window.mean_rtt() {
            self.lowest_window = Some(self.lowest_window.map_or(mean, |low| low.min(mean)));
        }
        self.decide(window, span);
        self.apply()
    }

    fn on_drain(&mut self, window: &WindowSummary) -> usize {
        self.baseline.record_drain(window);
        self.apply()
    }
}
