//! How long a lease lasts, and when its holder should call again.

use super::LeaseTable;
use crate::budget::types::LeaseRequest;

impl LeaseTable {
    /// The TTL of a lease granted for `req`: the configured TTL, or, for a
    /// holder whose calls last at most `calls_ms` (and that admits none
    /// later than that before its lease expires), that plus a quarter of the
    /// configured TTL as its admission window, if shorter. Every lease
    /// expires within the configured TTL, so a restarted table's learning
    /// mode (one TTL, or the stored horizon) still outlasts them all.
    pub fn lease_ttl(&self, req: &LeaseRequest) -> u64 {
        if req.calls_ms == 0 {
            return self.ttl_ms;
        }
        let window = (self.ttl_ms / 4).max(1);
        req.calls_ms.saturating_add(window).min(self.ttl_ms)
    }

    /// When the holder should call again (see [`Grant::renew_ms`]).
    pub(super) fn renew_in(
        &self,
        holder: &str,
        usable: u32,
        permits: u32,
        target: u32,
        ttl: u64,
        now: u64,
    ) -> u64 {
        let when = self.renew_rule(holder, usable, permits, target, ttl, now);
        // An adaptive limit learns from the reports renewals carry.
        match self.fleet {
            Some(_) => when.min(self.report_ms()),
            None => when,
        }
    }

    fn renew_rule(
        &self,
        holder: &str,
        usable: u32,
        permits: u32,
        target: u32,
        ttl: u64,
        now: u64,
    ) -> u64 {
        if permits > usable {
            // trimmed: its calls above `usable` finish soon
            return (ttl / 10).max(1);
        }
        if usable < target {
            // short of its share until another holder renews or expires
            let free_at = self
                .leases
                .iter()
                .filter(|(id, lease)| id.as_str() != holder && lease.permits > 0)
                .map(|(_, lease)| lease.renew_at.min(lease.expires_at))
                .min()
                .unwrap_or(now);
            let margin = (ttl / 50).max(1);
            return free_at
                .saturating_sub(now)
                .saturating_add(margin)
                .min(ttl / 4 * 3);
        }
        if usable.saturating_mul(2) > self.limit {
            // most of the budget: a holder that has not asked yet gets its
            // share within a quarter of the TTL
            return ttl / 4;
        }
        ttl / 4 * 3
    }
}
