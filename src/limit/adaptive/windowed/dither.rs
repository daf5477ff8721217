//! A low-discrepancy sequence in [0, 1) that dithers the applied limit.

/// The additive recurrence `d(n+1) = frac(d(n) + 1/φ)` (φ the golden
/// ratio): the fraction of steps with `d < f` tends to `f` for every `f`,
/// faster and more evenly than random draws, and with no state beyond one
/// number. `floor(limit + d)` then averages to the real `limit`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Dither(f64);

/// 1/φ = φ − 1.
const STEP: f64 = 0.618_033_988_749_895;

impl Dither {
    /// The next value of the sequence.
    pub(crate) fn next(&mut self) -> f64 {
        let next = self.0 + STEP;
        self.0 = if next >= 1.0 { next - 1.0 } else { next };
        self.0
    }
}
