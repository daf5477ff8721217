//! The lease table of one origin: the state a Durable Object holds.

use std::collections::BTreeMap;

mod park;
mod reconfigure;
mod renew;

use super::fair::fair_share;
use super::setting::{DeployVersion, LimitSetting};
use super::types::{FleetView, Grant, LeaseRequest};
use park::{Parked, Watch};

/// One holder's entry: its lease and its last reported demand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Lease {
    pub(super) permits: u32,
    wanted: u32,
    /// The calls it reported in flight at its last call.
    pub(super) in_use: u32,
    expires_at: u64,
    /// When the table told the holder to call again.
    renew_at: u64,
}

/// The leases of one origin, shared by every isolate that calls it.
///
/// Every method takes the current time in milliseconds (the object's
/// `Date.now()`); nothing reads a clock. The sum of the permits of
/// unexpired leases never exceeds the limit.
#[derive(Debug, Clone)]
pub struct LeaseTable {
    pub(super) limit: u32,
    ttl_ms: u64,
    learning_until: u64,
    pub(super) leases: BTreeMap<String, Lease>,
    /// Asks the table holds until it can grant more (see `table/park.rs`), in
    /// the order they came.
    parked: Vec<Parked>,
    /// Holders waiting to hear that the budget became contended.
    watches: Vec<Watch>,
    /// The adaptive fleet limit that moves `limit`, if any (`adaptive.rs`).
    pub(super) fleet: Option<super::FleetLimit>,
    /// How the limit is configured (`limit` is its current value).
    pub(super) configured: LimitSetting,
    /// The deploy version whose configuration is in force, and when a
    /// caller last stated it (see `table/reconfigure.rs`).
    version: DeployVersion,
    version_seen_at: u64,
}

impl LeaseTable {
    /// A table for a fleet limit of `limit` permits and leases of `ttl_ms`,
    /// started at `now`. It knows no lease, so it is in learning mode until
    /// `now + ttl_ms`: every lease an earlier table granted has expired or
    /// been reported by then.
    pub fn new(limit: u32, ttl_ms: u64, now: u64) -> Self {
        Self {
            limit,
            ttl_ms,
            learning_until: now.saturating_add(ttl_ms),
            leases: BTreeMap::new(),
            parked: Vec::new(),
            watches: Vec::new(),
            fleet: None,
            configured: LimitSetting::Fixed(limit),
            version: DeployVersion::UNVERSIONED,
            version_seen_at: now,
        }
    }

    /// A table started at `now` that knows when the leases of an earlier
    /// table expire at the latest (`horizon`, e.g. kept in the object's
    /// storage): it is in learning mode until the earlier of `horizon` and
    /// `now + ttl_ms`, so not at all when `horizon` has passed (a first
    /// start, or a restart after every old lease expired).
    pub fn resumed(limit: u32, ttl_ms: u64, now: u64, horizon: u64) -> Self {
        let mut table = Self::new(limit, ttl_ms, now);
        table.learning_until = table.learning_until.min(horizon);
        table
    }

    /// The fleet limit.
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// The lease TTL in milliseconds.
    pub fn ttl_ms(&self) -> u64 {
        self.ttl_ms
    }

    /// Whether the table is in learning mode at `now`: it then re-registers
    /// what holders report they hold and grants nothing new.
    pub fn learning(&self, now: u64) -> bool {
        now < self.learning_until
    }

    /// Handles one holder's request: grants, renews or releases its lease,
    /// and returns the whole lease.
    ///
    /// In learning mode the lease becomes what the holder reports it holds,
    /// at most what it wants or has in use, and at most what the limit
    /// leaves after the leases already registered. Otherwise the holder
    /// gets its fair share of the demand ([`fair_share`]) as far as the
    /// permits not leased to others allow, and never less than what it has
    /// in use of its current lease. A lease of 0 that wants nothing is
    /// forgotten.
    pub fn request(&mut self, holder: &str, req: LeaseRequest, now: u64) -> Grant {
        self.expire(now);
        self.learn(holder, &req, now);
        let learning = self.learning(now);
        let current = self.leases.get(holder).map_or(0, |lease| lease.permits);
        let others = self.leased().saturating_sub(current);
        let room = self.limit.saturating_sub(others);
        let target = self.fair_target(holder, req.wanted);
        // `usable`: what the holder may admit up to; `permits`: what the
        // table counts, never below the calls it has in use (a lease being
        // trimmed keeps them until the holder reports they finished).
        let (usable, permits) = if learning {
            let held = req.held.min(req.wanted.max(req.in_use)).min(room);
            (held, held)
        } else {
            // A fixed limit counts a lease never below its calls in flight,
            // even above the limit (one a reconfiguration lowered): the sum
            // the table counts then stays at or above the fleet's calls at
            // the origin, and `room` stays 0 until they end (see
            // `table/reconfigure.rs`). An adaptive limit, a moving estimate,
            // counts at most the room left, as it always has: counting the
            // calls in flight there too cost goodput (0.96 -> 0.81 in
            // `tests/budget_adaptive.rs`), the algorithm being tuned to it.
            let usable = target.min(room);
            let kept = req.in_use.min(current);
            let kept = if self.fleet.is_some() {
                kept.min(room)
            } else {
                kept
            };
            (usable, usable.max(kept))
        };
        let ttl_ms = self.lease_ttl(&req);
        let renew_ms = self.renew_in(holder, usable, permits, target, ttl_ms, now);
        let expires_at = now.saturating_add(ttl_ms);
        if permits == 0 && req.wanted == 0 {
            self.leases.remove(holder);
        } else {
            let lease = Lease {
                permits,
                wanted: req.wanted,
                in_use: req.in_use,
                expires_at,
                renew_at: now.saturating_add(renew_ms),
            };
            self.leases.insert(holder.to_owned(), lease);
        }
        Grant {
            permits: usable,
            ttl_ms,
            renew_ms,
            learning,
            contended: self.contended(),
            epoch: self.fleet.as_ref().map_or(0, super::FleetLimit::epoch),
        }
    }

    /// The requester's max-min fair share, given every other holder's last
    /// reported demand and its own new one. Ties go to the requester: among
    /// equal demands the table cannot serve all of, whoever asks gets the
    /// permits nobody holds, so a free permit never waits for a holder that
    /// does not ask (holders keep theirs until they give them back).
    pub(super) fn fair_target(&self, holder: &str, wanted: u32) -> u32 {
        let demands: Vec<u32> = core::iter::once(wanted)
            .chain(
                self.leases
                    .iter()
                    .filter(|(id, _)| id.as_str() != holder)
                    .map(|(_, lease)| lease.wanted.max(lease.permits)),
            )
            .collect();
        fair_share(self.limit, &demands, 0)
    }

    /// Whether the budget is contended: a holder waits for permits (an ask
    /// short of its fair share is kept). Holders then give back at once what
    /// they do not use (see [`Grant::contended`]); while nobody waits, they
    /// keep their leases to their renewal, and a permit is not moved (two
    /// calls to the object) for every dip of their demand.
    pub fn contended(&self) -> bool {
        !self.parked.is_empty()
    }

    /// Drops every lease whose expiry is at or before `now`, and every lease
    /// of no permits (a demand the table could not serve) whose holder has
    /// not called for a tenth of the TTL past the time it was told to: a
    /// holder that still wants calls by then, and one that holds nothing
    /// has nothing to renew, so its demand would otherwise shrink every
    /// other holder's fair share for a whole TTL. Returns the earliest
    /// expiry left (for the object's alarm). Idempotent: calling it again
    /// with the same or an earlier `now` changes nothing, so a retried alarm
    /// is harmless.
    pub fn expire(&mut self, now: u64) -> Option<u64> {
        let grace = (self.ttl_ms / 10).max(1);
        self.leases.retain(|_, lease| {
            lease.expires_at > now
                && (lease.permits > 0 || lease.renew_at.saturating_add(grace) > now)
        });
        self.next_expiry()
    }

    /// The earliest expiry among the leases, if any.
    pub fn next_expiry(&self) -> Option<u64> {
        self.leases.values().map(|lease| lease.expires_at).min()
    }

    /// Permits out under the leases the table holds (expired ones count
    /// until [`LeaseTable::expire`] or a request sweeps them).
    pub fn leased(&self) -> u32 {
        self.leases
            .values()
            .fold(0u32, |sum, lease| sum.saturating_add(lease.permits))
    }

    /// The permits leased to `holder`, or 0.
    pub fn leased_to(&self, holder: &str) -> u32 {
        self.leases.get(holder).map_or(0, |lease| lease.permits)
    }

    /// How many more permits than it holds `holder` last asked for.
    pub(super) fn unmet(&self, holder: &str) -> u32 {
        self.leases
            .get(holder)
            .map_or(0, |lease| lease.wanted.saturating_sub(lease.permits))
    }

    /// The leases per holder with at least one permit, by holder id.
    pub fn leases(&self) -> impl Iterator<Item = (&str, u32)> {
        self.leases
            .iter()
            .filter(|(_, lease)| lease.permits > 0)
            .map(|(id, lease)| (id.as_str(), lease.permits))
    }

    /// The fleet view at `now` (after sweeping expired leases).
    pub fn view(&mut self, now: u64) -> FleetView {
        self.expire(now);
        FleetView {
            limit: self.limit,
            leased: self.leased(),
            holders: u32::try_from(self.leases().count()).unwrap_or(u32::MAX),
            learning: self.learning(now),
        }
    }
}
