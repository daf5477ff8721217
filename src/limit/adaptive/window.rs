//! Samples gathered over about one round trip, for the delay-based limits.

use super::Sample;
use core::time::Duration;

/// What one window of samples saw.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Summary {
    /// The mean round-trip time.
    pub(crate) mean_rtt: Duration,
    /// The most calls in flight at the start of any call of the window.
    pub(crate) max_in_flight: usize,
    /// Whether any call of the window was dropped.
    pub(crate) dropped: bool,
}

/// Accumulates samples until a window is full.
#[derive(Clone, Debug, Default)]
pub(crate) struct Window {
    count: u32,
    total: Duration,
    max_in_flight: usize,
    dropped: bool,
}

impl Window {
    /// Adds `sample`; once `len` samples are in, returns their summary and
    /// starts the next window.
    pub(crate) fn push(&mut self, sample: &Sample, len: usize) -> Option<Summary> {
        self.count = self.count.saturating_add(1);
        self.total = self.total.saturating_add(sample.rtt());
        self.max_in_flight = self.max_in_flight.max(sample.in_flight());
        self.dropped |= sample.dropped();
        if (self.count as usize) < len.max(1) {
            return None;
        }
        let done = core::mem::take(self);
        Some(Summary {
            mean_rtt: done.total / done.count.max(1),
            max_in_flight: done.max_in_flight,
            dropped: done.dropped,
        })
    }
}
