//! Netflix's Gradient2: latency against a baseline, as a window rule.

use super::windowed::{integrate, WindowRule, Windowed};
use super::Bounds;

/// The rule of a delay-based limit after Netflix's Gradient2 (the
/// `concurrency-limits` project, `Gradient2Limit`, and its 2018 tech-blog
/// post *Performance Under Load*), run by the shared [`Windowed`]
/// decorator as [`Gradient2`].
///
/// As published, each update computes `gradient = clamp(long / short, 0.5,
/// 1)` (older releases: `tolerance × long / short`, tolerance 1.5), takes
/// `new = limit × gradient + queue_size` (queue size 4) and smooths it,
/// `limit = limit × (1 − 0.2) + new × 0.2`; `long` is an exponential
/// average of every RTT over 600 samples, `short` the current one.
///
/// What edgeshed changes, and why (measured in `tests/adaptive_convergence.rs`
/// with N independent limiters in front of one origin):
///
/// * **The baseline** is the shared [`Baseline`](super::Baseline) of
///   synchronised drains, not the long average: the average absorbs a
///   sustained queue (the limit and the queue then grow without end);
///   seeded from an overloaded first window it started wrong and, as it
///   only fell when the short RTT was below it, stayed wrong; and it rose
///   on under-used windows to the latency of the *fleet's* queue.
/// * **Growth `0.04 × √limit` per round trip instead of `+ queue_size` per
///   update.** As published the limit settles where `limit × (1 − gradient)
///   = queue_size`, a constant queue per client: N clients keep N × 4 calls
///   queued, and the growth scales with N. Less than proportional growth
///   against the proportional decrease converges unequal shares (binomial
///   congestion control, Bansal and Balakrishnan, INFOCOM 2001), and the
///   fleet grows by `0.04 × √(N × C)` per round trip: 1–4 % of a capacity C
///   for 1 to 8 clients.
/// * **Per round trip, solved over the window**: the
///   smoothed update `limit × (1 − 0.2 × (1 − gradient))` is applied once
///   per round trip the window spanned, so limiters whose windows last
///   longer (small limits collect samples slowly) move as fast, never below
///   the published one-shot correction `limit × gradient`.
/// * **Tolerance 1**, as the current release: the limit shrinks as soon as
///   the window's RTT exceeds the no-load RTT by more than one standard
///   error of its mean (so that a noisy origin does not move it by chance);
///   with the smoothing of 0.2 one client settles about 3 % above the
///   capacity, and eight clients of 8 slots about 20 %.
#[derive(Clone, Debug)]
pub struct Gradient2Rule {
    tolerance: f64,
    smoothing: f64,
}

/// Gradient2: the [`Gradient2Rule`] in the shared [`Windowed`] decorator.
///
/// ```
/// use edgeshed::limit::adaptive::{Gradient2, Limit};
///
/// let gradient2 = Gradient2::default();
/// assert_eq!(gradient2.limit(), 6);
/// assert_eq!(gradient2.bounds().max(), 64);
/// ```
pub type Gradient2 = Windowed<Gradient2Rule>;

impl Default for Gradient2Rule {
    /// Tolerance 1, smoothing 0.2.
    fn default() -> Self {
        Self {
            tolerance: 1.0,
            smoothing: 0.2,
        }
    }
}

impl WindowRule for Gradient2Rule {
    fn has_room(&self, ratio: f64) -> bool {
        ratio <= self.tolerance
    }

    fn threshold(&self) -> f64 {
        self.tolerance
    }

    fn next(&self, limit: f64, ratio: f64, rounds: f64) -> f64 {
        let gradient = (self.tolerance / ratio.max(1e-9)).clamp(0.5, 1.0);
        let decay = self.smoothing * (1.0 - gradient);
        integrate(limit, growth(limit), decay, rounds).max(limit * gradient)
    }
}

/// The growth per round trip of both delay-based rules (see
/// [`Gradient2Rule`]).
pub(crate) fn growth(limit: f64) -> f64 {
    0.04 * limit.max(1.0).sqrt()
}

impl Windowed<Gradient2Rule> {
    /// Gradient2 within `bounds`, tolerance 1, smoothing 0.2.
    pub fn new(bounds: Bounds) -> Self {
        Self::with_rule(Gradient2Rule::default(), bounds)
    }

    /// How much latency above the no-load RTT the limit tolerates before it
    /// shrinks (at least 1; default 1).
    pub fn tolerance(mut self, tolerance: f64) -> Self {
        self.rule_mut().tolerance = if tolerance.is_nan() {
            1.0
        } else {
            tolerance.clamp(1.0, 4.0)
        };
        self
    }

    /// How strongly a queue shrinks the limit per round trip, in (0, 1]
    /// (default 0.2, the published smoothing).
    pub fn smoothing(mut self, smoothing: f64) -> Self {
        self.rule_mut().smoothing = if smoothing.is_nan() {
            0.2
        } else {
            smoothing.clamp(0.01, 1.0)
        };
        self
    }
}

impl Default for Windowed<Gradient2Rule> {
    /// [`Bounds::EDGE`], tolerance 1, smoothing 0.2.
    fn default() -> Self {
        Self::new(Bounds::EDGE)
    }
}
