//! The isolate's side of a lease: one origin in one isolate.

mod calls;
mod config;
mod watch;

pub use config::{HolderConfig, Waiting};

use super::fallback::effective_limit;
use core::time::Duration;
use edgeshed::limit::adaptive::{Outcome, WindowSummary};

/// A call to the table under way.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pending {
    pub(super) sent_at: u64,
    pub(super) in_use: u32,
    pub(super) wanted: u32,
    /// How long the table may keep it.
    pub(super) wait_ms: u64,
    /// The permits the holder had when it sent it.
    pub(super) had: u32,
}

/// One isolate's lease on one origin's budget: what it holds, when to ask,
/// renew and give back.
///
/// The caller drives it with the time in milliseconds: [`LeaseHolder::poll`]
/// says whether to call the table now and with what; the answer goes to
/// [`LeaseHolder::on_grant`], a failure or a timeout to
/// [`LeaseHolder::on_failure`]. Admissions go through
/// [`LeaseHolder::try_admit`] and [`LeaseHolder::finish`];
/// [`LeaseHolder::next_poll_at`] says when to poll again if nothing happens.
///
/// - **Leases follow demand.** It asks for its demand (calls in flight plus
///   requests waiting, capped at the local limit) as soon as that exceeds
///   its lease and its free permits are taken, and lets the table keep the
///   request (`wait_ms`) for as long as its waiting requests can wait.
/// - **Giving back:** at its renewal it keeps the most it needed since its
///   last call, and everything at once when it is idle (no call in
///   flight, nobody waiting); while the table says the
///   budget is contended (an answer, or its watch: [`LeaseHolder::watch`]),
///   it gives back at once every permit it does not use.
/// - **Renewal:** when the table said ([`Grant::renew_ms`](super::Grant::renew_ms): 75 % of the TTL,
///   or sooner to give back permits others need), counted from when it sent
///   the call, and before its lease stops admitting (`cutoff_ms` before the
///   expiry).
/// - **Spacing:** renewals are `linger_ms` after the last call at the
///   earliest; an ask the table answered at once with nothing more waits
///   for the renewal (or a notice that permits are free); one the table kept
///   for its whole wait is repeated at once; a failed call after
///   `retry_ms`. An isolate that dies stops calling, and its lease expires
///   at the TTL.
#[derive(Debug, Clone)]
pub struct LeaseHolder {
    cfg: HolderConfig,
    permits: u32,
    /// What the table counts for the holder after its last answer: its
    /// permits, but never less than the calls it had in flight when it sent
    /// the call (a trimmed lease is counted at them until it reports that
    /// they ended).
    counted: u32,
    expires_at: u64,
    renew_at: u64,
    /// No ask for more before this (after an ask the table left short).
    grow_at: u64,
    /// No call before this (after a failure).
    retry_at: u64,
    in_flight: u32,
    /// What the last lease call asked for.
    last_wanted: u32,
    /// The most demand (calls in flight plus waiting requests) seen since
    /// the last call: what a renewal asks for.
    peak: u32,
    last_call_at: Option<u64>,
    pending: Option<Pending>,
    /// Calls started in `epoch` and finished since the last report.
    report: WindowSummary,
    /// The fleet limit's epoch, as the last answer said.
    epoch: u64,
    /// The last answer said the budget is contended.
    contended: bool,
    /// A watch is open (sent at).
    watch: Option<u64>,
    /// Its watch was answered since its last lease call.
    noticed: bool,
    /// No watch before this (after a failed one).
    watch_retry_at: u64,
    reachable: bool,
    /// Lease calls answered `.overloaded` in a row (the retry backs off).
    overloads: u32,
    calls: u64,
    failures: u64,
}

impl LeaseHolder {
    /// A holder with no lease yet (it asks on its first demand).
    pub fn new(cfg: HolderConfig) -> Self {
        Self {
            cfg,
            permits: 0,
            counted: 0,
            expires_at: 0,
            renew_at: 0,
            grow_at: 0,
            retry_at: 0,
            in_flight: 0,
            last_wanted: 0,
            peak: 0,
            last_call_at: None,
            pending: None,
            report: WindowSummary::default(),
            epoch: 0,
            contended: false,
            watch: None,
            noticed: false,
            watch_retry_at: 0,
            reachable: true,
            overloads: 0,
            calls: 0,
            failures: 0,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &HolderConfig {
        &self.cfg
    }

    /// Permits the holder may use at `now`: those of its unexpired lease (0
    /// once it expired), but while a call is under way only as many as it
    /// had in use when it sent it: the table may shrink the lease to that
    /// (never below), and the answer may be lost.
    pub fn held(&self, now: u64) -> u32 {
        if now >= self.expires_at {
            return 0;
        }
        match self.pending {
            Some(pending) => self.permits.min(pending.in_use),
            None => self.permits,
        }
    }

    /// Permits the holder may admit calls under at `now`: [`LeaseHolder::held`],
    /// but none once a call admitted now could outlive the lease
    /// (`cutoff_ms` before its expiry).
    pub fn usable(&self, now: u64) -> u32 {
        if now.saturating_add(self.cfg.cutoff_ms) >= self.expires_at {
            0
        } else {
            self.held(now)
        }
    }

    /// Whether the table counts more for the holder than its permits at
    /// `now` (a trimmed lease, counted at the calls it had in flight): it
    /// then calls when the table said even if it holds nothing, so the
    /// permits of calls that ended come back before the lease expires.
    pub(super) fn owes(&self, now: u64) -> bool {
        self.counted(now) > self.permits
    }

    /// What the table counts for the holder at `now`: its permits, or more
    /// for a trimmed lease; 0 once the lease expired.
    pub(super) fn counted(&self, now: u64) -> u32 {
        if now < self.expires_at {
            self.counted.max(self.permits)
        } else {
            0
        }
    }

    /// When the current lease expires (holder's clock), 0 before any grant.
    pub fn expires_at(&self) -> u64 {
        self.expires_at
    }

    /// Calls admitted and not yet finished.
    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// Whether the last call to the table succeeded (or none failed yet).
    pub fn reachable(&self) -> bool {
        self.reachable
    }

    /// Calls to the table started so far.
    pub fn calls(&self) -> u64 {
        self.calls
    }

    /// Calls to the table that failed so far.
    pub fn failures(&self) -> u64 {
        self.failures
    }

    /// Whether a call to the table is under way.
    pub fn pending(&self) -> bool {
        self.pending.is_some()
    }

    /// The effective limit at `now`: min(local limit, permits held), or the
    /// `unavailable` fallback while the table is unreachable
    /// ([`effective_limit`]).
    pub fn effective_limit(&self, now: u64) -> u32 {
        let held = self.usable(now);
        effective_limit(
            self.cfg.local_limit,
            held,
            self.reachable,
            self.cfg.unavailable,
        )
    }

    /// The limit stats show at `now`, with `waiting` requests waiting for a
    /// permit: [`LeaseHolder::effective_limit`] while the holder is in use
    /// (a lease, calls in flight, requests waiting, a call under way) or the
    /// table unreachable. Idle without a lease (before its first request,
    /// or once it gave its lease back) that would be 0 though nothing is
    /// refused: it shows instead what its next request asks for at most,
    /// its local limit, capped at `fleet` (the fleet limit as far as the
    /// isolate knows it).
    pub fn shown_limit(&self, now: u64, waiting: Waiting, fleet: u32) -> u32 {
        let idle = self.held(now) == 0
            && self.in_flight == 0
            && waiting.count == 0
            && self.pending.is_none()
            && self.reachable;
        if idle {
            self.cfg.local_limit.min(fleet)
        } else {
            self.effective_limit(now)
        }
    }

    /// Admits one call if the effective limit allows it.
    pub fn try_admit(&mut self, now: u64) -> bool {
        if self.in_flight >= self.effective_limit(now) {
            return false;
        }
        self.in_flight += 1;
        self.peak = self.peak.max(self.in_flight);
        true
    }

    /// One admitted call finished at `now`.
    pub fn finish(&mut self, _now: u64) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    /// The fleet limit's epoch the holder knows: tag each admitted call with
    /// it, and give it back to [`LeaseHolder::sample`].
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Adds a finished call to the next report (for an adaptive fleet
    /// limit): classified as `outcome`, `rtt` from admission, `in_flight`
    /// calls in flight when it started, admitted in epoch `epoch`. A call
    /// admitted under an older limit is no sample of the current one.
    pub fn sample(&mut self, epoch: u64, outcome: Outcome, rtt: Duration, in_flight: u32) {
        if epoch == self.epoch {
            self.report.record(outcome, rtt, in_flight as usize);
        }
    }
}
