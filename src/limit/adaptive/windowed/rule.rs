//! What a windowed rule decides, and the update both built-in rules share.

/// The part of a delay-based algorithm that differs between Gradient2 and
/// Vegas: how a window's latency moves the limit.
///
/// `ratio` is the window's mean RTT (served calls only) over the no-load
/// RTT of the [`Baseline`](super::Baseline). Every client in front of one origin sees about
/// the same ratio (they share its queue), so rules that depend on the ratio
/// alone — thresholds proportional to each client's own limit — agree
/// across a fleet on whether the origin is queueing.
pub trait WindowRule {
    /// Whether `ratio` shows no queue: slow start may go on doubling.
    fn has_room(&self, ratio: f64) -> bool;

    /// The ratio at which the rule turns from growing to shrinking: a
    /// window is complete early once its ratio lies clearly on one side.
    fn threshold(&self) -> f64;

    /// The next limit after a window without drops, in congestion
    /// avoidance. The window spanned `rounds` no-load round trips (at
    /// least 1): growth is per round trip, so limiters whose windows last
    /// longer (small limits collect their samples slowly) grow as fast.
    fn next(&self, limit: f64, ratio: f64, rounds: f64) -> f64;
}

/// The limit after `rounds` round trips of `dL/dt = growth - decay × L`
/// (per round trip) from `limit`: additive growth against a decrease in
/// proportion to the limit (its multiplicative part), solved over the
/// window so that a long window neither overshoots nor undershoots the
/// balance point `growth / decay`. It falls by at most half in one window
/// (the published Gradient2 clamp against outliers).
pub(crate) fn integrate(limit: f64, growth: f64, decay: f64, rounds: f64) -> f64 {
    if decay <= 0.0 {
        return limit + growth * rounds;
    }
    let balance = growth / decay;
    let next = balance + (limit - balance) * falloff(decay * rounds);
    next.max(limit * 0.5)
}

/// `(1 + x / 8)^-8`, within 3 % of `e^-x` where it matters (`x` up to 1)
/// and never below it: the exact `exp` would pull libm's into the wasm
/// builds (about 1 KiB gzip) for a model that is not that exact anyway.
fn falloff(x: f64) -> f64 {
    let base = 1.0 + x.max(0.0) / 8.0;
    let squared = base * base;
    let fourth = squared * squared;
    1.0 / (fourth * fourth)
}
