//! [`Stats`]: what an admission counts, in total and per criticality.

use super::{Admission, Criticality};
use crate::sync::{AtomicU64, Ordering};
use crate::time::Clock;

impl<C: Clock> Admission<C> {
    /// A snapshot of the limit, the queue and the counters, also per criticality.
    ///
    /// `in_flight`, `queued` and `limit` are read together, under one lock
    /// acquisition, so they all held at one instant: without a reserve
    /// `queued > 0` implies `in_flight >= limit`, and `in_flight > limit`
    /// only for a while after [`set_limit`](crate::semaphore::Semaphore::set_limit) lowered the
    /// limit below the permits out (they are retired as they come back). The
    /// counters are read just after; each only ever grows, and one may trail
    /// `in_flight` by a request that is being admitted at that very moment.
    pub fn stats(&self) -> Stats {
        let shared = &self.shared;
        let semaphore = &shared.semaphore;
        let counters = &shared.counters;
        let now = semaphore.snapshot();
        let mut stats = Stats {
            in_flight: now.in_use,
            queued: now.waiters,
            limit: now.limit,
            admitted: counters.admitted.total(),
            shed: counters.shed.total(),
            queue_timeouts: counters.queue_timeouts.total(),
            expired: counters.expired.load(Ordering::Relaxed),
            fair_share_refused: counters.fair_share_refused.load(Ordering::Relaxed),
            ..Stats::default()
        };
        if let Some(rate) = &self.rate {
            let rate = rate.stats();
            (stats.rate_limited, stats.rate_overflow) = (rate.limited, rate.overflow);
        }
        let mut ranked = 0;
        for rank in Criticality::ALL {
            let (queued, handed) = (now.queued[rank], now.handed[rank]);
            let class = stats.by_criticality.get_mut(rank);
            class.admitted = counters.admitted.get(rank);
            class.shed = counters.shed.get(rank);
            class.queue_timeouts = counters.queue_timeouts.get(rank);
            class.displaced = semaphore.displaced(rank);
            class.queued = queued;
            class.lent = now.lent[rank];
            if rank != Criticality::Default {
                // Picked up and not returned, plus handed over.
                class.in_flight = semaphore.out(rank) + handed;
                ranked += class.in_flight;
            }
            stats.displaced += class.displaced;
        }
        // Default permits are the rest of those out.
        stats.by_criticality.default.in_flight = now.in_use.saturating_sub(ranked);
        stats
    }
}

/// A snapshot of an [`Admission`](super::Admission)'s state and counters.
///
/// `in_flight`, `queued` and `limit` held together at one instant (see
/// [`Admission::stats`](super::Admission::stats)): without a reserve,
/// `queued > 0` implies `in_flight >= limit`.
///
/// `#[non_exhaustive]`: fields will be added, so outside this crate a
/// `Stats` is read, not built; start from [`Stats::default`] where one is
/// needed:
///
/// ```
/// let mut expected = edgeshed::Stats::default();
/// expected.limit = 2;
/// assert_eq!(edgeshed::Admission::wait(2).unwrap().stats(), expected);
/// ```
///
/// ```compile_fail
/// // error: cannot create non-exhaustive struct using struct expression
/// let stats = edgeshed::Stats {
///     in_flight: 0, queued: 0, limit: 2, admitted: 0, shed: 0, queue_timeouts: 0, expired: 0,
/// };
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Permits held right now.
    pub in_flight: usize,
    /// Requests waiting in the queue right now.
    pub queued: usize,
    /// The configured limit.
    pub limit: usize,
    /// Requests admitted since creation.
    pub admitted: u64,
    /// Requests rejected at once (limit reached, queue full or disabled).
    pub shed: u64,
    /// Requests rejected because their queue timeout passed.
    pub queue_timeouts: u64,
    /// Requests rejected because their deadline passed before admission.
    pub expired: u64,
    /// Waiters displaced from a full queue by more critical arrivals.
    pub displaced: u64,
    /// Calls refused (429) because their key held more than its fair share.
    pub fair_share_refused: u64,
    /// Calls refused (429) by the rate limit.
    pub rate_limited: u64,
    /// Calls of new keys decided by the rate limit's shared overflow
    /// allowance, because its key table was full of keys still limited
    /// (allowed or refused; those refused are in `rate_limited` too).
    pub rate_overflow: u64,
    /// The same, per criticality.
    pub by_criticality: ByCriticality,
}

/// [`Stats`] per criticality.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ByCriticality {
    /// Critical calls.
    pub critical: CriticalityStats,
    /// Default calls (and calls without a criticality).
    pub default: CriticalityStats,
    /// Sheddable calls.
    pub sheddable: CriticalityStats,
}

impl ByCriticality {
    /// The stats of `criticality`'s calls.
    pub fn get(&self, criticality: Criticality) -> &CriticalityStats {
        match criticality {
            Criticality::Critical => &self.critical,
            Criticality::Default => &self.default,
            Criticality::Sheddable => &self.sheddable,
        }
    }

    pub(super) fn get_mut(&mut self, criticality: Criticality) -> &mut CriticalityStats {
        match criticality {
            Criticality::Critical => &mut self.critical,
            Criticality::Default => &mut self.default,
            Criticality::Sheddable => &mut self.sheddable,
        }
    }
}

/// The calls of one criticality: what [`Stats`] counts, per criticality.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CriticalityStats {
    /// Admitted since creation.
    pub admitted: u64,
    /// Rejected at once (503 `limit`).
    pub shed: u64,
    /// Rejected when their queue timeout passed (503 `queue_timeout`).
    pub queue_timeouts: u64,
    /// Displaced from a full queue (503 `displaced`).
    pub displaced: u64,
    /// Permits held right now.
    pub in_flight: usize,
    /// Waiting right now.
    pub queued: usize,
    /// Whether the reserve these calls must leave for more critical ones is
    /// lent to them right now (no more critical call holds a permit, waits
    /// or was seen lately: they may use the whole limit). `false` where
    /// there is nothing to lend (no reserve, or critical calls).
    pub lent: bool,
}

/// One counter per criticality (sheddable, default, critical).
#[derive(Debug, Default)]
pub(crate) struct PerRank([AtomicU64; 3]);

impl PerRank {
    /// The counter of `rank`.
    #[inline(always)]
    pub(crate) fn at(&self, rank: Criticality) -> &AtomicU64 {
        let [sheddable, default, critical] = &self.0;
        match rank {
            Criticality::Sheddable => sheddable,
            Criticality::Default => default,
            Criticality::Critical => critical,
        }
    }

    #[inline(always)]
    pub(crate) fn add(&self, rank: Criticality) {
        self.at(rank).fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn get(&self, rank: Criticality) -> u64 {
        self.at(rank).load(Ordering::Relaxed)
    }

    pub(crate) fn total(&self) -> u64 {
        Criticality::ALL.iter().map(|&rank| self.get(rank)).sum()
    }
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) admitted: PerRank,
    pub(crate) shed: PerRank,
    pub(crate) queue_timeouts: PerRank,
    pub(crate) expired: AtomicU64,
    pub(crate) fair_share_refused: AtomicU64,
}
