//! [`FinishedCall`]: one finished call of a window, its times in seconds.

use crate::limit::adaptive::Sample;

/// A finished call with its times in seconds (f64: a third of the code of
/// `Instant` arithmetic in the wasm builds).
pub(crate) struct FinishedCall {
    pub(crate) started: f64,
    pub(crate) completed: f64,
    /// When it completed on the wall clock.
    pub(crate) wall: f64,
    pub(crate) sample: Sample,
}

impl FinishedCall {
    /// The call that `sample` describes.
    pub(super) fn new(sample: &Sample) -> Self {
        let started = sample.started().since_origin().as_secs_f64();
        let rtt = sample.rtt().as_secs_f64();
        let wall = sample
            .wall_started()
            .map_or(started, |wall| wall.as_secs_f64());
        Self {
            started,
            completed: started + rtt,
            wall: wall + rtt,
            sample: *sample,
        }
    }
}
