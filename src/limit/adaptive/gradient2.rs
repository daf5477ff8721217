//! Netflix's Gradient2: latency against a long-term baseline.

use super::window::{Summary, Window};
use super::{Bounds, Limit, Sample};

/// Delay-based limit after Netflix's Gradient2 (published in the
/// `concurrency-limits` project's documentation and its 2018 tech-blog post
/// *Performance Under Load*).
///
/// The published rule compares a short-window RTT with a long-window
/// exponential average (`long_window` samples, default 600):
/// `gradient = clamp(tolerance * long / short, 0.5, 1)` (tolerance 1.5),
/// `new = limit * gradient + queue_size` (queue size 4), smoothed as
/// `limit = limit * (1 - smoothing) + new * smoothing` (smoothing 0.2). The
/// limit does not move while the limiter is used below half its limit,
/// and the long average decays (×0.95) when `long / short > 2`, so it
/// recovers quickly after a spike.
///
/// What edgeshed changes, and why (a test in `tests/adaptive_convergence.rs`
/// or `tests/adaptive_algorithms.rs` fails without each change):
///
/// * **Windowed samples.** The short RTT is the mean of a window of about
///   one round trip (`max(limit, 5)` samples) and the limit moves once per
///   window, not once per call: per call, `+queue_size` was added `limit`
///   times per round trip before the first queued call could report back.
/// * **A baseline that does not drift.** As published, the long average
///   absorbs the queue under sustained overload: the short RTT stays high,
///   the long one rises to it, the gradient returns to 1, and the limit and
///   the origin's queue grow without end. Here the long average only
///   follows the short RTT *downwards* while the limiter is in use; it may
///   rise only from windows in which the limiter was used below half its
///   limit (then the latency is the origin's own, not our queue).
/// * **Growth only without a queue.** `+queue_size` is added only while
///   `short <= long * (1 + tolerance) / 2` (1.25 with the default); between
///   that and `tolerance` the limit holds. As published, the steady state
///   is `limit = tolerance * capacity + queue_size` (≥ 1.5 × capacity); with
///   the dead band it settles between 1.25 and 1.5 × capacity (measured:
///   1.30–1.40 with one limiter, 1.40–1.48 with three sharing the origin).
/// * A window with a drop does not grow the limit.
///
/// Known limit of the change: if the origin's own service time rises for
/// good while it is kept busy, the limit shrinks to keep the latency within
/// `tolerance` of the old baseline until load drops below half the limit.
///
/// ```
/// use edgeshed::limit::adaptive::{Gradient2, Limit};
///
/// let gradient2 = Gradient2::default();
/// assert_eq!(gradient2.limit(), 6);
/// assert_eq!(gradient2.bounds().max(), 64);
/// ```
#[derive(Clone, Debug)]
pub struct Gradient2 {
    bounds: Bounds,
    tolerance: f64,
    smoothing: f64,
    long_window: f64,
    queue_size: f64,
    limit: f64,
    /// The long-window baseline RTT, in seconds.
    long: Option<f64>,
    window: Window,
}

impl Gradient2 {
    /// Gradient2 within `bounds` with the published defaults (tolerance 1.5,
    /// smoothing 0.2, long window 600 samples, queue size 4).
    pub fn new(bounds: Bounds) -> Self {
        Self {
            bounds,
            tolerance: 1.5,
            smoothing: 0.2,
            long_window: 600.0,
            queue_size: 4.0,
            limit: bounds.initial() as f64,
            long: None,
            window: Window::default(),
        }
    }

    /// How much latency above the baseline is tolerated (at least 1).
    pub fn tolerance(mut self, tolerance: f64) -> Self {
        self.tolerance = if tolerance.is_nan() {
            1.5
        } else {
            tolerance.max(1.0)
        };
        self
    }

    /// How far each update moves the limit towards the new value, in (0, 1].
    pub fn smoothing(mut self, smoothing: f64) -> Self {
        self.smoothing = if smoothing.is_nan() {
            0.2
        } else {
            smoothing.clamp(0.01, 1.0)
        };
        self
    }

    /// The number of samples the long-term average spans (at least 1).
    pub fn long_window(mut self, samples: usize) -> Self {
        self.long_window = samples.max(1) as f64;
        self
    }

    /// The headroom added to the limit while no queue builds up.
    pub fn queue_size(mut self, queue_size: usize) -> Self {
        self.queue_size = queue_size as f64;
        self
    }

    fn on_window(&mut self, window: &Summary, samples: usize) {
        let short = window.mean_rtt.as_secs_f64().max(1e-9);
        let app_limited = window.max_in_flight * 2 < self.limit();
        let mut long = self.long.unwrap_or(short);
        // The exponential average over `long_window` samples, moved once
        // for the whole window.
        let alpha = (samples as f64 * 2.0 / (self.long_window + 1.0)).min(1.0);
        if app_limited || short < long {
            long += alpha * (short - long);
        }
        if long / short > 2.0 {
            long *= 0.95;
        }
        self.long = Some(long);
        if app_limited {
            return;
        }
        let ratio = short / long;
        let gradient = (self.tolerance / ratio).clamp(0.5, 1.0);
        let grow = !window.dropped && ratio <= (1.0 + self.tolerance) / 2.0;
        let headroom = if grow { self.queue_size } else { 0.0 };
        let target = self.limit * gradient + headroom;
        let smoothed = self.limit * (1.0 - self.smoothing) + target * self.smoothing;
        self.limit = self.bounds.clamp_f64(smoothed);
    }
}

impl Default for Gradient2 {
    /// [`Bounds::EDGE`] and the published defaults.
    fn default() -> Self {
        Self::new(Bounds::EDGE)
    }
}

impl Limit for Gradient2 {
    fn bounds(&self) -> Bounds {
        self.bounds
    }

    fn limit(&self) -> usize {
        self.bounds.clamp(self.limit)
    }

    fn update(&mut self, sample: &Sample) -> usize {
        let len = self.limit().max(5);
        if let Some(window) = self.window.push(sample, len) {
            self.on_window(&window, len);
        }
        self.limit()
    }
}
