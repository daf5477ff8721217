//! An adaptive fleet limit: the object runs the algorithm once for every
//! isolate, over the windows of calls their holders report.
//!
//! Per-isolate adaptive limits cannot divide a capacity C once isolates
//! outnumber it (each keeps at least its minimum of 1, and equal shares of a
//! small C are fractions of a call). Here one algorithm moves the budget's
//! limit, and the lease table shares that limit out as it shares a fixed one.
//!
//! - **Windows.** Holders report, with their lease calls, a
//!   [`WindowSummary`] of the calls they *started* in the current epoch (the
//!   number of the limit they were told). Reports of an older epoch are
//!   dropped: their calls ran under another limit. Once the reports of an
//!   epoch hold `max(limit, 8)` calls (a window with a drop: 8), they are
//!   one window: the algorithm takes it ([`WindowLimit::on_window`]), and
//!   the next epoch starts. Its `max_in_flight` is the fleet's (the most
//!   calls the holders reported in use at once), not one isolate's.
//! - **Drains.** The first window is held at the minimum limit, and every
//!   `DRAIN_EVERY` windows one is held at `DRAIN_DEPTH` of what the fleet
//!   used, divided by the last window's RTT ratio, so the origin's queue
//!   empties: such a window is a no-load measurement
//!   ([`WindowLimit::on_drain`]). A drain's window opens only once the
//!   fleet's calls in flight have come down to its limit (leases are not
//!   recalled: holders are trimmed at their next report): a drain measured
//!   while old leases still loaded the origin did not drain, raised the
//!   baseline, and so made the next drain shallower still (measured: the
//!   no-load RTT crept from 20 to 32 ms in a minute). (The per-isolate
//!   limits synchronise their drains on the wall clock; here the one object
//!   decides.)

use core::time::Duration;
use edgeshed::limit::adaptive::{AnyLimit, Limit, WindowLimit, WindowSummary};

/// The fewest calls in a window.
const MIN_WINDOW: u64 = 8;
/// Windows between two drains.
const DRAIN_EVERY: u64 = 16;
/// The share of the fleet's use a drain keeps (as the core's limits do).
const DRAIN_DEPTH: f64 = 0.7;

/// The fleet limit of one budget.
#[derive(Debug, Clone)]
pub struct FleetLimit {
    algorithm: AnyLimit,
    epoch: u64,
    window: WindowSummary,
    /// When the current window started (ms).
    opened_at: u64,
    /// The most calls the fleet had in flight during the current window.
    peak_in_use: u32,
    /// The drain's limit while one runs.
    drain: Option<u32>,
    /// A drain waits for the fleet's calls in flight to come down to it.
    settling: bool,
    /// Windows since the last drain.
    since_drain: u64,
    /// The last window's RTT over the lowest window's: how loaded it was.
    ratio: f64,
    lowest: Option<Duration>,
    last_mean: Option<Duration>,
}

impl FleetLimit {
    /// The fleet limit `algorithm` (with its bounds) started at `now`; its
    /// first window is a drain at the minimum limit.
    pub fn new(algorithm: AnyLimit, now: u64) -> Self {
        let min = u32::try_from(algorithm.bounds().min()).unwrap_or(1);
        Self {
            algorithm,
            epoch: 1,
            window: WindowSummary::default(),
            opened_at: now,
            peak_in_use: 0,
            drain: Some(min.max(1)),
            settling: false,
            since_drain: 0,
            ratio: 1.0,
            lowest: None,
            last_mean: None,
        }
    }

    /// The same limit numbering its epochs after `epoch` (a limit that
    /// replaces another: reports of the old one's epochs are no samples of
    /// it).
    pub fn after_epoch(mut self, epoch: u64) -> Self {
        self.epoch = epoch.saturating_add(1);
        self
    }

    /// The limit now (the drain's while one runs).
    pub fn limit(&self) -> u32 {
        self.drain
            .unwrap_or_else(|| u32::try_from(self.algorithm.limit()).unwrap_or(u32::MAX))
    }

    /// The number of the current limit: reports say which one their calls
    /// started under.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Whether a drain holds the limit now.
    pub fn draining(&self) -> bool {
        self.drain.is_some()
    }

    /// The mean RTT of the last window, if any.
    pub fn mean_rtt(&self) -> Option<Duration> {
        self.last_mean
    }

    /// The fleet has `in_use` calls in flight at `now` (as the holders last
    /// reported). A drain that waited for it to come down opens its window.
    pub fn in_use(&mut self, in_use: u32, now: u64) {
        if self.settling {
            if self.drain.is_some_and(|drain| in_use <= drain) {
                self.settling = false;
                self.epoch += 1;
                self.opened_at = now;
                self.peak_in_use = in_use;
            }
            return;
        }
        self.peak_in_use = self.peak_in_use.max(in_use);
    }

    /// A holder's report of calls it started in `epoch`, at `now`. Returns
    /// whether the limit may have changed (a window closed).
    pub fn record(&mut self, report: &WindowSummary, epoch: u64, now: u64) -> bool {
        if self.settling || epoch != self.epoch || report.is_empty() {
            return false;
        }
        self.window.merge(report);
        let needed = u64::from(self.limit()).max(MIN_WINDOW);
        let count = self.window.count();
        if count < MIN_WINDOW || (count < needed && self.window.dropped() == 0) {
            return false;
        }
        let window =
            core::mem::take(&mut self.window).with_max_in_flight(self.peak_in_use as usize);
        let span = Duration::from_millis(now.saturating_sub(self.opened_at));
        if let Some(mean) = window.mean_rtt() {
            let lowest = self.lowest.map_or(mean, |low| low.min(mean));
            self.lowest = Some(lowest);
            let no_load = no_load(&self.algorithm).unwrap_or(lowest);
            self.ratio = mean.as_secs_f64() / no_load.as_secs_f64().max(1e-9);
            self.last_mean = Some(mean);
        }
        let used = u64::from(self.limit()).min(u64::from(self.peak_in_use).max(1));
        if self.drain.take().is_some() {
            self.algorithm.on_drain(&window);
        } else {
            self.algorithm.on_window(&window, span);
            self.since_drain += 1;
            if self.since_drain >= DRAIN_EVERY && window.dropped() == 0 {
                self.since_drain = 0;
                let depth = used as f64 * DRAIN_DEPTH / self.ratio.max(1.0);
                let min = self.algorithm.bounds().min() as f64;
                self.drain = Some(depth.max(min).floor().max(1.0) as u32);
                self.settling = true;
            }
        }
        self.epoch += 1;
        self.opened_at = now;
        self.peak_in_use = 0;
        true
    }
}

/// The algorithm's no-load RTT estimate (from drains), if it has one.
fn no_load(algorithm: &AnyLimit) -> Option<Duration> {
    match algorithm {
        AnyLimit::Gradient2(windowed) => windowed.baseline().no_load(),
        AnyLimit::Vegas(windowed) => windowed.baseline().no_load(),
        _ => None,
    }
}
