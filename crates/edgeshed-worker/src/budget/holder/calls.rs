//! The holder's calls to the table: when to call and with what, and what
//! an answer or a failure changes.

use super::{LeaseHolder, Pending, Waiting};
use crate::budget::types::{Grant, LeaseRequest};

impl LeaseHolder {
    /// Whether to call the table at `now`, with `waiting` requests waiting
    /// for a permit, and the request to send. Records the call as started:
    /// its outcome must come back through [`LeaseHolder::on_grant`] or
    /// [`LeaseHolder::on_failure`].
    pub fn poll(&mut self, now: u64, waiting: Waiting) -> Option<LeaseRequest> {
        let demand = self.in_flight.saturating_add(waiting.count);
        self.peak = self.peak.max(demand);
        if self.pending.is_some() || (!self.reachable && now < self.retry_at) {
            return None;
        }
        let held = self.held(now);
        let need = demand.min(self.cfg.local_limit);
        let usable = self.usable(now);
        let (wanted, wait_ms) = if need > usable {
            // Permits it may use still free: the waiting requests take them
            // first (a call under way would leave it only those in use).
            if now < self.grow_at || self.in_flight < usable {
                return None;
            }
            (need, self.wait_for(now, waiting.until, held))
        } else if let Some(keep) = self.giving_back(now, held, demand) {
            (keep.max(demand).min(self.cfg.local_limit), 0)
        } else {
            return None;
        };
        self.pending = Some(Pending {
            sent_at: now,
            in_use: self.in_flight,
            wanted,
            wait_ms,
            had: self.permits,
        });
        self.last_call_at = Some(now);
        self.last_wanted = wanted;
        self.noticed = false;
        self.peak = demand;
        self.calls += 1;
        // the table drops its watch: this call supersedes it
        self.watch = None;
        // A trimmed lease may have more calls in flight than it may admit:
        // the table still counts them, and so does a report to a restarted
        // table.
        let reported = if held > 0 {
            held.max(self.in_flight)
        } else {
            0
        };
        let mut request = LeaseRequest::new(reported, self.in_flight, wanted).waiting(wait_ms);
        request.report = core::mem::take(&mut self.report);
        request.epoch = self.epoch;
        // its calls end `cutoff_ms` after admission at the latest: the table
        // may grant a lease only that much longer than its admission window
        request.calls_ms = self.cfg.cutoff_ms;
        Some(request)
    }

    /// What to keep if the holder should renew or give permits back now
    /// (`demand`: its calls in flight and waiting requests): nothing, at
    /// once, when it is idle (no call in flight, nobody waiting); while the
    /// budget is contended, every permit it does not use now, at once
    /// (another holder waits for it); when its watch was called for free
    /// permits it no longer wants, its demand; at its renewal,
    /// the most it needed since its last call, also when it holds nothing but the table still
    /// counts calls it had in flight (a lease trimmed to them: the renewal
    /// tells the table they ended, instead of letting it count them until
    /// the lease expires). Renewals are `linger_ms` after the last call at
    /// the earliest.
    fn giving_back(&self, now: u64, held: u32, demand: u32) -> Option<u32> {
        if held == 0 && !self.owes(now) {
            return None;
        }
        // (the calls a trimmed lease was counted at included: they ended)
        if self.contended && demand < self.counted(now) {
            return Some(demand);
        }
        // Idle (no call in flight, nobody waiting): it gives the whole lease
        // back now, not at its renewal, so a permit an isolate used for one
        // call does not sit idle for most of a TTL, nor for `linger_ms`
        // (24 of 100 permits sat in idle leases with 1,000 isolates at 2x,
        // `tests/budget_scale.rs`).
        if demand == 0 {
            return Some(0);
        }
        let last = self.last_call_at.unwrap_or(0);
        if now < last.saturating_add(self.cfg.linger_ms) {
            return None;
        }
        // Its watch was called for free permits it no longer wants (the
        // requests that wanted them are gone): tell the table, which would
        // otherwise keep calling it.
        if self.noticed && self.last_wanted > self.permits && demand <= self.permits {
            return Some(demand.max(self.in_flight));
        }
        if now < self.renew_at {
            return None;
        }
        Some(self.peak)
    }

    /// How long the table may hold an ask: as long as the waiting requests
    /// wait, at most `patience_ms`, and, while the holder uses its current
    /// lease (it renews only with the answer), at most half of what is left
    /// of that lease.
    fn wait_for(&self, now: u64, until: u64, held: u32) -> u64 {
        let left = if held > 0 {
            self.expires_at.saturating_sub(now) / 2
        } else {
            u64::MAX
        };
        until
            .saturating_sub(now)
            .min(self.cfg.patience_ms)
            .min(left)
    }

    /// When [`LeaseHolder::poll`] may next want to call, if nothing else
    /// happens (no admission, no answer): a renewal, a surplus to give back,
    /// a repeated ask or a retry. `None` while a call is under way or when
    /// nothing is due.
    pub fn next_poll_at(&self, now: u64, waiting: Waiting) -> Option<u64> {
        if self.pending.is_some() {
            return None;
        }
        let demand = self.in_flight.saturating_add(waiting.count);
        if !self.reachable && (demand > 0 || self.permits > 0) {
            return Some(self.retry_at.max(now));
        }
        let usable = self.usable(now);
        if demand.min(self.cfg.local_limit) > usable {
            // (with permits still free, the admission that takes them polls)
            return (self.in_flight >= usable).then(|| self.grow_at.max(now));
        }
        if self.held(now) == 0 && !self.owes(now) {
            return None;
        }
        if self.contended && demand < self.counted(now) {
            return Some(now);
        }
        let spaced = self
            .last_call_at
            .map_or(now, |at| at.saturating_add(self.cfg.linger_ms));
        if self.noticed && self.last_wanted > self.permits {
            return Some(spaced.max(now));
        }
        if demand == 0 {
            // an idle lease goes back at once
            return Some(now);
        }
        Some(self.renew_at.max(spaced).max(now))
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
        let Some(pending) = self.pending.take() else {
            return;
        };
        let stale = grant.learning && now >= self.expires_at;
        // Learning grants nothing new: a trimmed holder reported its calls
        // in flight too, and keeps admitting only up to what it had.
        self.permits = match (stale, grant.learning) {
            (true, _) => 0,
            (false, true) => grant.permits.min(self.permits),
            (false, false) => grant.permits,
        };
        // the table counts the lease never below the calls then in flight
        self.counted = self.permits.max(pending.in_use);
        let sent_at = pending.sent_at;
        self.expires_at = sent_at.saturating_add(grant.ttl_ms);
        // Renew before the lease stops admitting (`cutoff_ms` before expiry).
        let last_useful = self
            .expires_at
            .saturating_sub(self.cfg.cutoff_ms.saturating_add(self.cfg.linger_ms));
        self.renew_at = sent_at
            .saturating_add(grant.renew_ms.min(grant.ttl_ms))
            .min(last_useful);
        // Left short: after getting some, it asks again for the rest at
        // once; after the table kept it for all its wait, once its spacing
        // allows; answered at once with nothing more (it is at its fair
        // share, or the table learns), at its renewal, unless its watch
        // hears sooner that permits are free.
        let waited = now.saturating_sub(sent_at) >= pending.wait_ms && pending.wait_ms > 0;
        self.grow_at = if self.permits >= pending.wanted || self.permits > pending.had {
            0
        } else if waited {
            sent_at.saturating_add(self.cfg.linger_ms)
        } else {
            self.renew_at
        };
        self.contended = grant.contended;
        if grant.epoch != self.epoch {
            // a new limit: calls admitted under the old one are no samples
            self.epoch = grant.epoch;
            self.report = edgeshed::limit::adaptive::WindowSummary::default();
        }
        self.reachable = true;
        self.overloads = 0;
    }

    /// The call started by [`LeaseHolder::poll`] failed or timed out. The
    /// table may have applied it, so the lease keeps only the permits that
    /// were in use when it was sent, until its expiry; the holder retries
    /// `retry_ms` after it sent the call and falls back meanwhile
    /// ([`Unavailable`](crate::budget::Unavailable)). The samples it carried are lost.
    pub fn on_failure(&mut self) {
        if let Some(pending) = self.pending.take() {
            self.permits = self.permits.min(pending.in_use);
            self.retry_at = pending.sent_at.saturating_add(self.cfg.retry_ms);
        }
        self.reachable = false;
        self.overloads = 0;
        self.failures += 1;
    }

    /// The call started by [`LeaseHolder::poll`] failed with an
    /// `.overloaded` error: the object is past its soft limit, and calling it
    /// again soon would only add to its queue. As [`LeaseHolder::on_failure`]
    /// (the fallback applies), but the next call waits `retry_ms` doubled
    /// for every overloaded answer in a row, at most 8 × `retry_ms` (four
    /// fifths of the TTL): a fleet of isolates sheds its load on the object
    /// together, and the first answer that is not `.overloaded` resets it.
    pub fn on_overloaded(&mut self) {
        let sent_at = self.pending.map(|pending| pending.sent_at);
        let overloads = self.overloads.saturating_add(1);
        self.on_failure();
        self.overloads = overloads;
        if let Some(sent_at) = sent_at {
            let factor = 1u64 << (overloads - 1).min(3);
            self.retry_at = sent_at.saturating_add(self.cfg.retry_ms.saturating_mul(factor));
        }
    }
}
