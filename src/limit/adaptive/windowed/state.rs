//! The state of a windowed limit, apart from its rule: windows, drains,
//! the baseline, slow start and the dithered limit. Not generic over the
//! rule (it takes a `&dyn WindowRule`), so that the two built-in rules
//! share one copy of it in the wasm builds.

use super::active_drain::DRAIN_DROP_BACKOFF;
use super::baseline::Baseline;
use super::dither::Dither;
use super::drain::{Drains, Levels, Step};
use super::finished_call::FinishedCall;
use super::WindowRule;
use crate::limit::adaptive::{Bounds, Sample, WindowSummary};
use core::time::Duration;

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
/// A warm start whose mean RTT was above this many times the first drain's
/// ran under a queue (its initial limit was above the capacity).
const SEED_QUEUED: f64 = 1.5;
/// What share of the origin's capacity the fleet keeps in flight during a
/// drain: below 1 so that the queue empties even where the RTT ratio
/// underestimates the overload.
const DRAIN_DEPTH: f64 = 0.85;

/// Everything a windowed limit keeps but its rule.
#[derive(Clone, Debug)]
pub(crate) struct State {
    pub(super) bounds: Bounds,
    pub(super) limit: f64,
    pub(super) applied: usize,
    dither: Dither,
    window: WindowSummary,
    since: Option<f64>,
    opened: Option<f64>,
    pub(super) baseline: Baseline,
    lowest_window: Option<f64>,
    pub(super) drains: Drains,
    slow_start: bool,
    ssthresh: f64,
    dropping: bool,
    recent_rtt: Option<f64>,
    /// The last window's measured ratio and busiest moment.
    recent_load: Option<(f64, usize)>,
    /// The warm start's mean RTT, measured at the initial limit (under
    /// whatever queue the fleet's initial limits made): the no-load RTT
    /// until the first synchronised drain, which holds the minimum so that
    /// the whole fleet drains at once and measures the origin's own RTT,
    /// whatever the initial limits were.
    seed: Option<f64>,
}

impl State {
    /// Within `bounds`, at the initial limit, before any drain.
    pub(super) fn new(bounds: Bounds) -> Self {
        Self {
            bounds,
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
            seed: None,
        }
    }

    /// Applies the real-valued limit (a drain's while one is on), dithered.
    pub(super) fn apply(&mut self) -> usize {
        let dither = self.dither.next();
        self.applied = match self.drains.limit() {
            Some(drain) => self.bounds.clamp(drain),
            None => self.bounds.clamp(self.limit + dither),
        };
        self.applied
    }

    /// Whether the window holds enough calls to judge by: `max(limit, 8)`,
    /// and more while its mean RTT is too noisy to tell on which side of
    /// the rule's threshold it lies (two standard errors; service times
    /// that vary), up to `max(limit, 48)`. A window with a drop, or in slow
    /// start, is complete at the minimum.
    fn complete(&self, window: &WindowSummary, rule: &dyn WindowRule) -> bool {
        let limit = self.limit.ceil() as u64;
        let count = window.count();
        if count < limit.max(MIN_WINDOW) {
            return false;
        }
        // In slow start a wrong call costs one window's overshoot, which the
        // next window takes back: no need to wait for a clear ratio.
        if self.slow_start || window.dropped() > 0 || count >= limit.max(MAX_WINDOW) {
            return true;
        }
        let (Some(error), Some(mean)) = (window.relative_error(), window.mean_secs()) else {
            return false;
        };
        if error <= WINDOW_ERROR {
            return true;
        }
        let Some(no_load) = self.no_load() else {
            return false;
        };
        let ratio = mean / no_load.max(1e-9);
        (ratio - rule.threshold()).abs() >= 4.0 * error * ratio
    }

    /// The limit a periodic drain holds: 0.85 of what this limiter had in
    /// flight, divided by the last window's RTT ratio (rounded down). If
    /// every limiter of the fleet does the same, the origin holds about 0.85
    /// of its capacity whatever the overload was (its concurrency over its
    /// capacity is about that ratio), so its queue empties, while the drain
    /// keeps most of the throughput and measures many calls.
    fn drain_limit(&self) -> f64 {
        if self.baseline.drains() == 0 {
            return self.bounds.min() as f64;
        }
        let (ratio, in_flight) = self.recent_load.unwrap_or((1.0, usize::MAX));
        let used = self.limit.min(in_flight as f64);
        let level = used * DRAIN_DEPTH / ratio.max(1.0);
        // After a window with drops, at most the backed-off limit's 0.8.
        let level = if self.dropping {
            level.min(self.limit * DROP_BACKOFF)
        } else {
            level
        };
        self.bounds.clamp_f64(level)
    }

    /// The no-load RTT in seconds: the drains', or for windows fed from
    /// elsewhere before any drain, the lowest window mean.
    pub(super) fn no_load(&self) -> Option<f64> {
        self.baseline
            .no_load_secs()
            .or(self.seed)
            .or(self.lowest_window)
    }

    /// The rule applied to one closed window that spanned `span` seconds.
    fn decide(&mut self, window: &WindowSummary, span: f64, rule: &dyn WindowRule) {
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
        let Some(mean) = window.mean_secs() else {
            return;
        };
        self.recent_rtt = Some(mean);
        let Some(no_load) = self.no_load() else {
            return;
        };
        let measured = mean / no_load.max(1e-9);
        self.recent_load = Some((measured, window.max_in_flight()));
        // How far the window's ratio lies from the rule's threshold beyond
        // two standard errors of its mean: within them, the window is taken
        // to lie at the threshold (a noisy origin does not move the limit
        // down by chance).
        let margin = window.relative_error().unwrap_or(0.0) * measured;
        let threshold = rule.threshold();
        let ratio = if measured > threshold {
            (measured - margin).max(threshold)
        } else {
            (measured + margin).min(threshold)
        };
        let rounds = (span / mean.max(1e-9)).clamp(1.0, MAX_ROUNDS);
        let in_use = window.max_in_flight() as f64 >= self.limit.floor();
        if self.slow_start {
            if rule.has_room(ratio) {
                if in_use {
                    self.limit = self.bounds.clamp_f64((self.limit * 2.0).min(self.ssthresh));
                    self.slow_start = self.limit < self.ssthresh;
                }
                return;
            }
            self.slow_start = false;
        }
        let next = rule.next(self.limit, ratio, rounds);
        if next <= self.limit || in_use {
            self.limit = self.bounds.clamp_f64(next);
        }
    }

    /// Takes one finished call into account (see `Limit::update`).
    pub(super) fn update(&mut self, sample: &Sample, rule: &dyn WindowRule) -> usize {
        let call = FinishedCall::new(sample);
        let now = call.completed;
        let flush = self.recent_rtt.unwrap_or(0.0).max(now - call.started);
        // The first drain is a warm start: it holds the initial limit (see
        // `Drains::observe`).
        let levels = Levels {
            drain: self.drain_limit(),
            warm_start: self.bounds.initial() as f64,
            min: self.bounds.min() as f64,
        };
        match (self.drains).observe(&call, flush, levels, &mut self.baseline) {
            Step::Draining => return self.apply(),
            Step::Ended { seed, cuts } => {
                if cuts > 0 {
                    // Drops in the drain, or a queue it did not drain: the
                    // origin has less room than before; the limit takes
                    // each cut the drain took (slow start may return to it).
                    let cut = DRAIN_DROP_BACKOFF.powi(cuts.min(16) as i32);
                    self.limit = self.bounds.clamp_f64(self.limit * cut);
                    self.ssthresh = self.limit;
                    self.slow_start = false;
                }
                // After the warm start the limit stays where it was (the
                // initial limit) and slow start goes on from there.
                let first_drain =
                    seed.is_none() && self.seed.is_some() && self.baseline.drains() == 1;
                if let (true, Some(seed), Some(no_load)) =
                    (first_drain, self.seed, self.baseline.no_load_secs())
                {
                    if seed > SEED_QUEUED * no_load {
                        // The warm start ran under a queue: the initial
                        // limits were above the capacity. Slow start from
                        // the bottom, as a limit with no warm start would.
                        self.limit = self.bounds.min() as f64;
                        self.slow_start = true;
                        self.ssthresh = self.bounds.max() as f64;
                    }
                }
                self.seed = seed.or(self.seed);
                self.window = WindowSummary::default();
                self.since = Some(now);
                self.opened = Some(now);
                return self.apply();
            }
            Step::Normal => {}
        }
        if self.since.is_none_or(|since| call.started >= since) {
            self.window.add(sample);
            if self.complete(&self.window, rule) {
                let window = core::mem::take(&mut self.window);
                let opened = self.opened.unwrap_or(call.started);
                self.opened = Some(now);
                let before = self.limit;
                self.decide(&window, now - opened, rule);
                if self.limit < before {
                    // Calls admitted under the higher limit say nothing of
                    // the lower one (and drops among them are not new).
                    self.since = Some(now);
                }
            }
        }
        self.apply()
    }

    /// Takes a window gathered elsewhere (see `WindowLimit::on_window`).
    pub(super) fn on_window(
        &mut self,
        window: &WindowSummary,
        span: Duration,
        rule: &dyn WindowRule,
    ) -> usize {
        if let Some(mean) = window.mean_secs() {
            self.lowest_window = Some(self.lowest_window.map_or(mean, |low| low.min(mean)));
        }
        self.decide(window, span.as_secs_f64(), rule);
        self.apply()
    }

    /// Takes a drain measured elsewhere (see `WindowLimit::on_drain`).
    pub(super) fn on_drain(&mut self, window: &WindowSummary) -> usize {
        self.baseline.record_drain(window);
        self.apply()
    }
}
