//! The range an adaptive limit moves in, and its edge-sized defaults.

use core::fmt;

/// The initial limit and the range `[min, max]` an adaptive limit stays in.
///
/// The defaults are sized for one edge isolate: **initial 6, min 1, max 64**.
///
/// * `initial = 6`: a worker invocation has at most 6 outgoing connections
///   waiting for response headers; the runtime silently queues the rest. A
///   start above 6 would only move the queue out of sight, below 6 would
///   leave known capacity unused before the first samples arrive.
/// * `min = 1`: one call always gets through, so the limit keeps receiving
///   samples and can recover; a limit of zero would never learn again.
/// * `max = 64`: one isolate serves many concurrent requests (each with its
///   own 6 connections), but beyond a few dozen calls to one origin the
///   isolate's memory and the origin's fairness to other isolates matter
///   more than a higher limit; the bound also caps how far a mistaken
///   sample (a cached, instant answer) can push the limit.
///
/// ```
/// use edgeshed::limit::adaptive::Bounds;
///
/// let bounds = Bounds::new(10, 2, 40).unwrap();
/// assert_eq!(bounds.clamp(100.0), 40);
/// assert_eq!(bounds.clamp(0.3), 2);
/// assert!(Bounds::new(10, 20, 40).is_err()); // initial below min
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    initial: usize,
    min: usize,
    max: usize,
}

impl Bounds {
    /// The edge defaults: initial 6, min 1, max 64 (see the type's docs).
    pub const EDGE: Bounds = Bounds {
        initial: 6,
        min: 1,
        max: 64,
    };

    /// `initial` within `[min, max]`, `min >= 1`. Refuses anything else,
    /// naming the parameter at fault.
    pub fn new(initial: usize, min: usize, max: usize) -> Result<Self, InvalidBounds> {
        if min == 0 {
            return Err(InvalidBounds("min_limit must be at least 1, got 0"));
        }
        if max < min {
            return Err(InvalidBounds("max_limit must be at least min_limit"));
        }
        if initial < min || initial > max {
            return Err(InvalidBounds(
                "initial_limit must lie within [min_limit, max_limit]",
            ));
        }
        Ok(Self { initial, min, max })
    }

    /// The limit before any sample.
    pub const fn initial(&self) -> usize {
        self.initial
    }

    /// The lowest the limit goes.
    pub const fn min(&self) -> usize {
        self.min
    }

    /// The highest the limit goes.
    pub const fn max(&self) -> usize {
        self.max
    }

    /// A real-valued limit rounded down into `[min, max]` (NaN gives `min`).
    pub fn clamp(&self, limit: f64) -> usize {
        if limit.is_nan() || limit < self.min as f64 {
            return self.min;
        }
        if limit >= self.max as f64 {
            return self.max;
        }
        // In range, so the cast neither truncates nor saturates.
        (limit as usize).max(self.min).min(self.max)
    }

    /// A real-valued limit kept within `[min, max]` without rounding.
    pub fn clamp_f64(&self, limit: f64) -> f64 {
        if limit.is_nan() {
            return self.min as f64;
        }
        // Not `f64::clamp`: its `min <= max` assertion (always true here)
        // formats floats, which costs the wasm builds ~10 KiB gzip.
        limit.max(self.min as f64).min(self.max as f64)
    }
}

impl Default for Bounds {
    /// [`Bounds::EDGE`].
    fn default() -> Self {
        Self::EDGE
    }
}

/// [`Bounds::new`] refused its arguments; the message names the parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidBounds(&'static str);

impl fmt::Display for InvalidBounds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for InvalidBounds {}
