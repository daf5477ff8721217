//! TCP Vegas' queue estimate, as a window rule.

use super::gradient2::growth;
use super::windowed::{integrate, WindowRule, Windowed};
use super::Bounds;

/// The rule of a delay-based limit after TCP Vegas (Brakmo and Peterson,
/// *TCP Vegas: End to End Congestion Avoidance on a Global Internet*, IEEE
/// JSAC 1995), in the form Netflix's `concurrency-limits` documents for its
/// `VegasLimit`, run by the shared [`Windowed`] decorator as [`Vegas`].
///
/// As published, the calls queued at the origin are estimated as `queue =
/// limit × (1 − rtt_no_load / rtt)`; with `l = log10(limit)`: `queue <= l`
/// grows the limit by `6 l`, `queue < 3 l` by `l`, `queue > 6 l` shrinks it
/// by `l`, a drop shrinks it by `l`. `rtt_no_load` is the lowest RTT seen,
/// replaced by the next sample now and then (a probe).
///
/// What edgeshed changes, and why (measured in `tests/adaptive_convergence.rs`):
///
/// * **The no-load RTT** is the shared [`Baseline`](super::Baseline) of
///   synchronised drains. The probe took a sample of the loaded origin as
///   its no-load RTT; with several clients the estimate ratcheted upwards
///   (from 20 ms to more than 300 ms over minutes).
/// * **Thresholds proportional to the limit**: the estimated queue is
///   compared with `alpha = 1 %` of the limit (2 % for slow start's room),
///   not with a number of calls. As published, N clients keep N times that
///   many calls queued at the origin; in proportion, the comparison depends
///   on the RTT ratio alone, which every client of one origin shares.
/// * **Multiplicative decrease, no dead band**: per round trip the limit
///   loses 0.22 of the queue estimate beyond alpha (at most all of it at
///   once), and grows by the shared `0.04 × √limit`
///   ([`Gradient2Rule`](super::Gradient2Rule)).
///   `− log10(limit)` shrank small and large shares by the same amount and
///   the band between alpha and beta left them where they were, which kept
///   whatever unfairness the start left (limits of 24, 1 and 1 were
///   measured).
#[derive(Clone, Debug)]
pub struct VegasRule {
    alpha: f64,
    threshold: f64,
    smoothing: f64,
}

/// Vegas: the [`VegasRule`] in the shared [`Windowed`] decorator.
///
/// ```
/// use edgeshed::limit::adaptive::{Limit, Vegas};
///
/// assert_eq!(Vegas::default().limit(), 6);
/// ```
pub type Vegas = Windowed<VegasRule>;

impl Default for VegasRule {
    /// Alpha 1 %, room below 2 %, smoothing 0.22.
    fn default() -> Self {
        Self {
            alpha: 0.01,
            threshold: 0.02,
            smoothing: 0.22,
        }
    }
}

impl VegasRule {
    /// The estimated queue as a fraction of the limit.
    fn queue_share(ratio: f64) -> f64 {
        1.0 - 1.0 / ratio.max(1e-9)
    }
}

impl WindowRule for VegasRule {
    fn has_room(&self, ratio: f64) -> bool {
        Self::queue_share(ratio) <= self.threshold
    }

    fn threshold(&self) -> f64 {
        1.0 / (1.0 - self.alpha)
    }

    fn next(&self, limit: f64, ratio: f64, rounds: f64) -> f64 {
        let excess = (Self::queue_share(ratio) - self.alpha).max(0.0);
        let decay = excess * self.smoothing;
        integrate(limit, growth(limit), decay, rounds).max(limit * (1.0 - excess))
    }
}

impl Windowed<VegasRule> {
    /// Vegas within `bounds`, with the thresholds above.
    pub fn new(bounds: Bounds) -> Self {
        Self::with_rule(VegasRule::default(), bounds)
    }
}

impl Default for Windowed<VegasRule> {
    /// [`Bounds::EDGE`] and the thresholds above.
    fn default() -> Self {
        Self::new(Bounds::EDGE)
    }
}
