//! The isolate's side of a lease: one origin in one isolate.

use super::fallback::{effective_limit, Unavailable};
use super::types::{Grant, LeaseRequest};

/// How a [`LeaseHolder`] behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HolderConfig {
    /// The isolate's own limit for the origin (`maxInFlight`): the holder
    /// never asks for more, and its effective limit never exceeds it.
    pub local_limit: u32,
    /// The least time between two calls to the table (after a failure, or
    /// while it waits for its first permit); renewals are never closer.
    pub retry_ms: u64,
    /// What to admit while the table is unreachable.
    pub unavailable: Unavailable,
}

impl HolderConfig {
    /// A configuration for leases of `ttl_ms`: calls at least a tenth of the
    /// TTL apart (and at least 1 ms).
    pub fn new(local_limit: u32, ttl_ms: u64, unavailable: Unavailable) -> Self {
        Self {
            local_limit,
            retry_ms: (ttl_ms / 10).max(1),
            unavailable,
        }
    }
}

/// One isolate's lease on one origin's budget: what it holds, when to renew,
/// how much to ask for and when to give permits back.
///
/// The caller drives it with the time in milliseconds: [`LeaseHolder::poll`]
/// says whether to call the table now and with what; the answer goes to
/// [`LeaseHolder::on_grant`], a failure or a timeout to
/// [`LeaseHolder::on_failure`]. Admissions go through
/// [`LeaseHolder::try_admit`] and [`LeaseHolder::finish`].
///
/// - **Renewal:** while it used its permits since the last call, the holder
///   renews when the table said ([`Grant::renew_ms`]: 75 % of the TTL, or
///   sooner to give back permits others need), counted from when it sent
///   the call; a holder the table could not serve waits until then too,
///   instead of asking every `retry_ms`.
/// - **Sizing:** it asks for the peak demand (in flight + queued) seen since
///   its last call, capped at the local limit; it asks early only when it
///   holds nothing yet or its demand outgrew what it last asked for.
/// - **Giving back:** a renewal that finds the holder idle (no demand for
///   `retry_ms`) asks for 0, so an idle holder returns its permits within
///   about 75 % of the TTL of going idle; an isolate that dies, or that is
///   not polled, stops renewing and its lease expires at the TTL.
#[derive(Debug, Clone)]
pub struct LeaseHolder {
    cfg: HolderConfig,
    permits: u32,
    expires_at: u64,
    renew_at: u64,
    /// Until when a holder the table could not serve waits before asking
    /// again (the table's hint), 0 when it does not wait.
    wait_until: u64,
    in_flight: u32,
    peak: u32,
    last_busy_at: u64,
    last_wanted: u32,
    last_call_at: Option<u64>,
    /// The call under way: when it was sent and the calls in flight then.
    pending: Option<(u64, u32)>,
    reachable: bool,
    calls: u64,
    failures: u64,
}

impl LeaseHolder {
    /// A holder with no lease yet (it asks on its first demand).
    pub fn new(cfg: HolderConfig) -> Self {
        Self {
            cfg,
            permits: 0,
            expires_at: 0,
            renew_at: 0,
            wait_until: 0,
            in_flight: 0,
            peak: 0,
            last_busy_at: 0,
            last_wanted: 0,
            last_call_at: None,
            pending: None,
            reachable: true,
            calls: 0,
            failures: 0,
        }
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
            Some((_, in_use)) => self.permits.min(in_use),
            None => self.permits,
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
        let held = self.held(now);
        effective_limit(
            self.cfg.local_limit,
            held,
            self.reachable,
            self.cfg.unavailable,
        )
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
    pub fn finish(&mut self, now: u64) {
        self.in_flight = self.in_flight.saturating_sub(1);
        self.last_busy_at = self.last_busy_at.max(now);
    }

    /// Whether to call the table at `now`, with `queued` calls waiting for a
    /// permit, and the request to send. Records the call as started: its
    /// outcome must come back through [`LeaseHolder::on_grant`] or
    /// [`LeaseHolder::on_failure`].
    pub fn poll(&mut self, now: u64, queued: u32) -> Option<LeaseRequest> {
        let demand = self.in_flight.saturating_add(queued);
        self.peak = self.peak.max(demand);
        if demand > 0 {
            self.last_busy_at = self.last_busy_at.max(now);
        }
        if self.pending.is_some() {
            return None;
        }
        // Calls are `retry_ms` apart, except a first ask after the holder
        // gave everything back: that is a new need, not a retry (the table
        // answered, and nothing is held).
        let returned = self.reachable && self.last_wanted == 0 && self.held(now) == 0;
        if let Some(last) = self.last_call_at {
            if now < last.saturating_add(self.cfg.retry_ms) && !(returned && demand > 0) {
                return None;
            }
        }
        let held = self.held(now);
        if held == 0 && self.reachable && now < self.wait_until {
            // the table said when permits can free: no polling until then
            return None;
        }
        let local = self.cfg.local_limit;
        let idle = now.saturating_sub(self.last_busy_at) >= self.cfg.retry_ms;
        let wanted = if held > 0 && now >= self.renew_at {
            // Renewal: nothing if idle now, else the period's peak demand.
            if idle {
                0
            } else {
                self.peak.min(local).max(self.in_flight)
            }
        } else {
            let short = demand.min(local);
            let outgrew = short > self.last_wanted;
            if short <= held || !(held == 0 || outgrew) {
                return None;
            }
            short
        };
        self.pending = Some((now, self.in_flight));
        self.last_call_at = Some(now);
        self.last_wanted = wanted;
        self.peak = demand;
        self.calls += 1;
        // A trimmed lease may have more calls in flight than it may admit:
        // the table still counts them, and so does a report to a restarted
        // table.
        let reported = if held > 0 {
            held.max(self.in_flight)
        } else {
            0
        };
        Some(LeaseRequest {
            held: reported,
            in_use: self.in_flight,
            wanted,
        })
    }

    /// The table answered at `now` the call started by
    /// [`LeaseHolder::poll`]. The lease counts from when the call was sent,
    /// so it never outlives the table's record.
    ///
    /// A learning-mode grant re-registers the lease the holder reported. If
    /// that lease had expired before the answer came back, the table may
    /// have seen the report after the expiry (when an earlier table could
    /// already have leased those permits to another isolate), so the holder
    /// uses none of it and asks again.
    pub fn on_grant(&mut self, now: u64, grant: Grant) {
        let sent_at = self.pending.take().map_or(0, |(sent_at, _)| sent_at);
        let stale = grant.learning && now >= self.expires_at;
        // Learning grants nothing new: a trimmed holder reported its calls
        // in flight too, and keeps admitting only up to what it had.
        self.permits = match (stale, grant.learning) {
            (true, _) => 0,
            (false, true) => grant.permits.min(self.permits),
            (false, false) => grant.permits,
        };
        self.expires_at = sent_at.saturating_add(grant.ttl_ms);
        self.renew_at = sent_at.saturating_add(grant.renew_ms.min(grant.ttl_ms));
        self.wait_until = if self.permits < self.last_wanted {
            self.renew_at
        } else {
            0
        };
        self.reachable = true;
    }

    /// The call started by [`LeaseHolder::poll`] failed or timed out. The
    /// table may have applied it, so the lease keeps only the permits that
    /// were in use when it was sent, until its expiry; the holder retries
    /// after `retry_ms` and falls back meanwhile ([`Unavailable`]).
    pub fn on_failure(&mut self) {
        if let Some((_, in_use)) = self.pending.take() {
            self.permits = self.permits.min(in_use);
        }
        self.reachable = false;
        self.last_wanted = 0;
        self.failures += 1;
    }
}
