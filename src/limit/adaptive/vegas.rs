//! TCP Vegas' queue estimate, applied to a concurrency limit.

use super::window::{Summary, Window};
use super::{Bounds, Limit, Sample};
use crate::time::Instant;
use core::time::Duration;

/// Delay-based limit after TCP Vegas (Brakmo and Peterson, *TCP Vegas: End
/// to End Congestion Avoidance on a Global Internet*, IEEE JSAC 1995), in
/// the form Netflix's concurrency-limits documents for its `VegasLimit`.
///
/// The calls queued at the origin are estimated as
/// `queue = ceil(limit * (1 - rtt_no_load / rtt))`. With `l = log10(limit)`
/// (at least 1): `queue <= l` grows the limit by `6 l` (beta), `queue < 3 l`
/// (alpha) by `l`, `queue > 6 l` shrinks it by `l`, and a drop shrinks it
/// by `l`. The limit does not move while the limiter is used below half its
/// limit. `rtt_no_load` is the lowest RTT seen, probed again periodically.
///
/// What edgeshed changes, and why:
///
/// * **Windowed samples.** The limit moves once per window of about one
///   round trip (`max(limit, 5)` samples) using the window's mean RTT; per
///   call, `+6 l` was added many times before the queue it built could show.
/// * **A probe that drains, so the no-load RTT does not drift.** As
///   published, the probe forgets `rtt_no_load` and takes the next sample as
///   the new one; under sustained load that sample already includes the
///   queue, so the estimate of the queue falls, the limit grows, and the
///   next probe learns a larger queue still. Here, every `probe_every`
///   windows (default 30, about 30 round trips) the limit is halved for one
///   window, and `rtt_no_load` becomes the lowest RTT of calls admitted
///   during that drain (the limiter's own queue is gone by then).
///
/// * **Like compared with like, and no rounding up.** The no-load RTT is
///   the lowest *window mean* (and, after a probe, the drained window's
///   mean), not the lowest single RTT, and the queue estimate is not
///   rounded up. With service times that vary (0.5–1.5 × S in the tests,
///   timer jitter in workerd), the lowest single RTT is about half the
///   mean even with nothing queued, and `ceil` makes any difference at all
///   at least one call: the estimate then always exceeds the capped beta
///   at small limits, and the limit fell to 1 and stayed there.
/// * **Thresholds in proportion to the limit.** alpha, beta and the
///   threshold are capped at `limit / 6`, `limit / 3` and `limit / 12`. As
///   published they are a number of calls per limiter, so N isolates keep N
///   times that queue at the origin, and a small origin (C = 10) settles
///   above 1.5 C even with one. Capped, every limiter keeps at most a third
///   of its own limit queued, so the origin's queue stays below a third of
///   all limits together, however many isolates share it.
///
/// Measured in `tests/adaptive_convergence.rs`: one limiter settles at
/// 1.13–1.38 C (constant or varied service times); three keep the origin's
/// queue at or below 1.75 C, though not fairly (Vegas' additive steps keep
/// whatever differences the start left, e.g. limits of 24, 1 and 1).
///
/// ```
/// use edgeshed::limit::adaptive::{Limit, Vegas};
///
/// assert_eq!(Vegas::default().limit(), 6);
/// ```
#[derive(Clone, Debug)]
pub struct Vegas {
    bounds: Bounds,
    smoothing: f64,
    probe_every: u32,
    limit: f64,
    rtt_no_load: Option<Duration>,
    windows: u32,
    window: Window,
    probe: Option<Probe>,
}

/// A drain in progress: the calls admitted after `since` measure the RTT.
#[derive(Clone, Debug)]
struct Probe {
    since: Instant,
    window: Window,
}

impl Vegas {
    /// Vegas within `bounds`, smoothing 1 (the published default), a probe
    /// every 30 windows.
    pub fn new(bounds: Bounds) -> Self {
        Self {
            bounds,
            smoothing: 1.0,
            probe_every: 30,
            limit: bounds.initial() as f64,
            rtt_no_load: None,
            windows: 0,
            window: Window::default(),
            probe: None,
        }
    }

    /// How far each update moves the limit towards the new value, in (0, 1].
    pub fn smoothing(mut self, smoothing: f64) -> Self {
        self.smoothing = if smoothing.is_nan() {
            1.0
        } else {
            smoothing.clamp(0.01, 1.0)
        };
        self
    }

    /// Windows between two probes of the no-load RTT (at least 2).
    pub fn probe_every(mut self, windows: u32) -> Self {
        self.probe_every = windows.max(2);
        self
    }

    /// The no-load RTT learned so far.
    pub fn rtt_no_load(&self) -> Option<Duration> {
        self.rtt_no_load
    }

    fn on_window(&mut self, window: &Summary, completed: Instant) {
        let no_load = match self.rtt_no_load {
            Some(known) => known.min(window.mean_rtt),
            None => window.mean_rtt,
        };
        self.rtt_no_load = Some(no_load);
        self.windows = self.windows.saturating_add(1);
        if self.windows % self.probe_every == 0 {
            self.probe = Some(Probe {
                since: completed,
                window: Window::default(),
            });
        }
        let limit = self.limit;
        let log = limit.log10().max(1.0);
        let target = if window.dropped {
            limit - log
        } else if window.max_in_flight * 2 < self.limit() {
            return;
        } else {
            let rtt = window.mean_rtt.as_secs_f64();
            let ratio = if rtt > 0.0 {
                no_load.as_secs_f64() / rtt
            } else {
                1.0
            };
            let queue = limit * (1.0 - ratio);
            // The published thresholds, capped in proportion to the limit.
            let alpha = (3.0 * log).min(limit / 6.0);
            let beta = (6.0 * log).min(limit / 3.0);
            let threshold = log.min(limit / 12.0);
            if queue <= threshold {
                limit + beta
            } else if queue < alpha {
                limit + log
            } else if queue > beta {
                limit - log
            } else {
                limit
            }
        };
        let smoothed = limit * (1.0 - self.smoothing) + target * self.smoothing;
        self.limit = self.bounds.clamp_f64(smoothed);
    }
}

impl Default for Vegas {
    /// [`Bounds::EDGE`], smoothing 1, a probe every 30 windows.
    fn default() -> Self {
        Self::new(Bounds::EDGE)
    }
}

impl Limit for Vegas {
    fn bounds(&self) -> Bounds {
        self.bounds
    }

    fn limit(&self) -> usize {
        let limit = self.bounds.clamp(self.limit);
        match self.probe {
            Some(_) => self.bounds.clamp((limit / 2) as f64),
            None => limit,
        }
    }

    fn update(&mut self, sample: &Sample) -> usize {
        if let Some(probe) = &mut self.probe {
            if sample.started() > probe.since {
                let len = self.bounds.clamp(self.limit / 2.0).max(3);
                if let Some(drained) = probe.window.push(sample, len) {
                    self.rtt_no_load = Some(drained.mean_rtt);
                    self.probe = None;
                }
            }
            return self.limit();
        }
        let len = self.limit().max(5);
        if let Some(window) = self.window.push(sample, len) {
            self.on_window(&window, sample.completed());
        }
        self.limit()
    }
}
