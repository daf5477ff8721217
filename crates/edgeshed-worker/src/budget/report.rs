//! What a holder tells the table about its calls to the origin: the samples
//! of an adaptive fleet limit, summed over the time between two calls.

/// A summary of the calls one holder finished since its last report.
///
/// Only served calls inform the round-trip times; drops are counted. The
/// table adds the reports of every holder into one window of the fleet's
/// calls (see `FleetLimit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Report {
    /// Calls the origin served.
    pub served: u32,
    /// Calls the origin dropped (an overload answer, its timeout, a
    /// connection failure).
    pub dropped: u32,
    /// The sum of the served calls' round-trip times, in microseconds.
    pub rtt_sum_us: u64,
    /// The shortest served round-trip time, in microseconds (`u64::MAX`
    /// when nothing was served).
    pub rtt_min_us: u64,
    /// The most calls the holder had in flight at the start of a call.
    pub max_in_flight: u32,
}

impl Report {
    /// No calls.
    pub const EMPTY: Report = Report {
        served: 0,
        dropped: 0,
        rtt_sum_us: 0,
        rtt_min_us: u64::MAX,
        max_in_flight: 0,
    };

    /// Calls reported (served and dropped).
    pub fn count(&self) -> u32 {
        self.served.saturating_add(self.dropped)
    }

    /// Whether no call is reported.
    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }

    /// Adds one served call that took `rtt_us`, with `in_flight` calls in
    /// flight when it started (itself included).
    pub fn served(&mut self, rtt_us: u64, in_flight: u32) {
        self.served = self.served.saturating_add(1);
        self.rtt_sum_us = self.rtt_sum_us.saturating_add(rtt_us);
        self.rtt_min_us = self.rtt_min_us.min(rtt_us);
        self.max_in_flight = self.max_in_flight.max(in_flight);
    }

    /// Adds one dropped call, with `in_flight` calls in flight when it
    /// started.
    pub fn dropped(&mut self, in_flight: u32) {
        self.dropped = self.dropped.saturating_add(1);
        self.max_in_flight = self.max_in_flight.max(in_flight);
    }

    /// Both reports in one.
    pub fn merge(&mut self, other: &Report) {
        self.served = self.served.saturating_add(other.served);
        self.dropped = self.dropped.saturating_add(other.dropped);
        self.rtt_sum_us = self.rtt_sum_us.saturating_add(other.rtt_sum_us);
        self.rtt_min_us = self.rtt_min_us.min(other.rtt_min_us);
        self.max_in_flight = self.max_in_flight.max(other.max_in_flight);
    }

    /// The mean round-trip time of the served calls, in microseconds.
    pub fn mean_rtt_us(&self) -> Option<u64> {
        (self.served > 0).then(|| self.rtt_sum_us / u64::from(self.served))
    }
}

impl Default for Report {
    fn default() -> Self {
        Self::EMPTY
    }
}
