//! [`Queue`]: the state behind the semaphore's lock — the waiters, the
//! limit and its debt, the reserve's keeps, the per-key counts and codel's
//! standing state — and the fair-queueing choices: whom to serve next and
//! whom a full queue gives up.
//!
//! **Fair queueing** (after Kubernetes' API Priority and Fairness, which
//! dispatches the queued requests of one priority level by flow): within
//! one criticality every key's waiters form a flow of their own, and a
//! freed permit goes to the flow whose key has had the least service for
//! its weight — the permits it holds plus its *recent grants*, each grant
//! counting one and halved every [`half_life`] grants of the limit — the
//! one served longest ago among equals. A key that floods only lengthens its own flow; a quiet
//! key's next call is served at the next free permit. A call without a key
//! belongs to the keyless key (`keys.rs`), so leaving the key out buys
//! nothing. Higher criticalities still go first.
//!
//! Why recent grants, not only the permits held now: holdings say what a
//! key has at this instant, not what it takes. On the noisy-tenant bench's
//! scenario on the manual clock (limit 4, queue 4 of 50 ms, ten quiet keys
//! at 5 % of the capacity each beside a flood, through the gateway's
//! fan-out: `crates/edgeshed-worker/tests/tenants_fanout.rs`), ranked by
//! holdings a quiet key whose calls came in a burst (two in flight, a
//! third waiting) lost the next permit to the flood whenever the flood held
//! fewer just then: 40 % of the quiet waiters that timed out had been
//! overtaken so, and the quiet keys kept 0.940 / 0.933 / 0.912 of their
//! goodput alone with the flood at 1× / 3× / 10× (0.918 keyless). With its
//! recent grants counted, the flood, served at nearly every grant, ranks
//! after a quiet key's burst whatever it holds (see the figures in
//! `tenants_fanout.rs`). Between keys of equal demand, or weighted ones,
//! recent grants go as their shares, so the permits held still decide
//! (a key of weight 3 beside one of weight 1 keeps holding three slots to
//! one); a key whose demand drops is ranked as a quiet one within a few
//! half-lives; a key with no calls is forgotten at once and comes back with
//! none.
//!
//! A key's recent grants count every permit it takes: from the queue, or
//! at once for a keyed call. The keyless key's permits taken at once are
//! not counted (most are taken on the lock-free path, when nobody waits);
//! its grants from the queue are, and a keyless flood nearly always waits.

use super::keys::{KeySlot, KeyTable, RECENT_ONE};
use super::waiters::Waiters;
use crate::criticality::{Criticality, Reserve};
use crate::per_criticality::PerCriticality;
use codel::Codel;

pub(super) mod codel;

pub(super) struct Queue {
    pub(super) waiters: Waiters,
    /// The configured number of permits.
    pub(super) limit: usize,
    /// Permits still out that must be retired (not reused) when they come
    /// back, because the limit was lowered.
    pub(super) debt: usize,
    pub(super) reserve: Reserve,
    /// Free permits each rank must leave.
    keeps: PerCriticality<usize>,
    pub(super) keys: KeyTable,
    /// Codel's state, for a codel queue.
    pub(super) codel: Option<Codel>,
    /// Serve the newest waiter of a flow first (codel's adaptive LIFO).
    pub(super) newest_first: bool,
    /// Permits handed to waiters that have not picked them up, per rank.
    pub(super) handed: PerCriticality<usize>,
    /// Grants so far: the sequence that orders keys served longest ago.
    grants: u64,
    /// Per rank, locked-path arrivals since a more critical call was last
    /// seen, up to the count that lends its reserve (`lending.rs`); a limit
    /// starts out quiet.
    pub(super) quiet: PerCriticality<usize>,
}

/// A key's calls (in flight plus waiting, or in flight only) or its recent
/// grants, for its weight, compared without division:
/// `a.calls / a.weight < b.calls / b.weight`.
#[derive(Clone, Copy, Debug)]
struct Load {
    calls: usize,
    weight: u32,
}

impl Load {
    fn below(self, other: Load) -> bool {
        (self.calls as u128) * u128::from(other.weight)
            < (other.calls as u128) * u128::from(self.weight)
    }
}

/// Grants after which a key's recent grants are halved: four limits'
/// worth, at least 8 (at saturation, about four round trips of the limit's
/// calls: long enough to tell a flood from a burst, short enough that a key
/// whose demand drops is soon served as a quiet one).
pub(super) fn half_life(limit: usize) -> u64 {
    u64::try_from(limit.saturating_mul(4).max(8)).unwrap_or(u64::MAX)
}

impl Queue {
    pub(super) fn new(limit: usize) -> Self {
        Self {
            waiters: Waiters::default(),
            limit,
            debt: 0,
            reserve: Reserve::NONE,
            keeps: PerCriticality::default(),
            keys: KeyTable::default(),
            codel: None,
            newest_first: false,
            handed: PerCriticality::default(),
            grants: 0,
            quiet: PerCriticality::from_fn(|_| usize::MAX),
        }
    }

    /// A permit handed to a waiter of `rank` was picked up or passed on.
    pub(super) fn unhand(&mut self, rank: Criticality) {
        self.handed[rank] = self.handed[rank].saturating_sub(1);
    }

    /// Whether releases must take the lock.
    pub(super) fn needs_slow(&self) -> bool {
        self.waiters.len() > 0 || self.debt > 0
    }

    /// Free permits a `rank` call must leave for more critical ones.
    pub(super) fn keep(&self, rank: Criticality) -> usize {
        self.keeps[rank]
    }

    pub(super) fn set_limit(&mut self, limit: usize) {
        self.limit = limit;
        self.update_keeps();
    }

    pub(super) fn update_keeps(&mut self) {
        let (reserve, limit) = (self.reserve, self.limit);
        self.keeps = PerCriticality::from_fn(|rank| reserve.keep(limit, rank));
    }

    /// Permits the keyless key holds, when `in_use` permits are out.
    pub(super) fn keyless_holding(&self, in_use: usize) -> usize {
        in_use.saturating_sub(self.keys.keyed_holding())
    }

    fn held(&self, key: KeySlot, in_use: usize) -> Load {
        Load {
            calls: self.keys.holding(key, self.keyless_holding(in_use)),
            weight: self.keys.weight(key),
        }
    }

    fn total(&self, key: KeySlot, in_use: usize) -> Load {
        let held = self.held(key, in_use);
        Load {
            calls: held.calls + self.keys.waiting_of(key),
            ..held
        }
    }

    /// `key`'s service for fair queueing: the permits it holds (with
    /// `in_use` permits out) plus its recent grants, for its weight (see
    /// the module docs).
    fn service(&self, key: KeySlot, in_use: usize) -> Load {
        let held = self.held(key, in_use);
        let recent = self.keys.recent(key, self.grants, half_life(self.limit));
        let held = u64::try_from(held.calls).unwrap_or(u64::MAX);
        let service = held.saturating_mul(RECENT_ONE).saturating_add(recent);
        Load {
            calls: usize::try_from(service).unwrap_or(usize::MAX),
            weight: self.keys.weight(key),
        }
    }

    /// Whether `key` holds more than its fair share: the limit divided by
    /// the keys with calls in flight or waiting, times its weight, rounded
    /// up. Rounded up, a key may always hold one permit: with more keys
    /// than permits every share is under one, and rounded down a key
    /// holding its only call would be over it (refused while its call runs).
    pub(super) fn over_share(&self, key: KeySlot, in_use: usize) -> bool {
        let held = self.held(key, in_use);
        let active = self.keys.active(self.keyless_holding(in_use)).max(1);
        let share = ((self.limit as u128) * u128::from(held.weight)).div_ceil(active as u128);
        (held.calls as u128) > share
    }

    /// Whether calls of keys other than `key`'s wait at `rank` or above
    /// (a less critical waiter is served after a `rank` call anyway).
    pub(super) fn others_waiting(&self, key: KeySlot, rank: Criticality) -> bool {
        Criticality::ALL
            .into_iter()
            .take_while(|&above| above >= rank)
            .any(|above| self.waiters.len_of(above) > self.waiters.flow_len(key, above))
    }

    /// The waiter of `rank` to serve next: the front of the flow whose key
    /// has had the least service for its weight (the permits it holds plus
    /// its recent grants); among equals, the key served longest ago, then
    /// the one whose oldest waiter is oldest.
    pub(super) fn pick(&self, rank: Criticality, in_use: usize) -> Option<usize> {
        let oldest = |key| {
            let index = self.waiters.end(key, rank, false);
            index.map_or(u64::MAX, |index| self.waiters.stamp(index))
        };
        let mut best: Option<(KeySlot, Load, (u64, u64))> = None;
        for &key in self.waiters.flows(rank) {
            let recent = self.service(key, in_use);
            let age = (self.keys.served(key), oldest(key));
            let better = best.is_none_or(|(_, least, best_age)| {
                recent.below(least) || (!least.below(recent) && age < best_age)
            });
            if better {
                best = Some((key, recent, age));
            }
        }
        let (key, _, _) = best?;
        self.waiters.end(key, rank, self.newest_first)
    }

    /// Records that the waiter of `key` was granted a permit.
    pub(super) fn served(&mut self, key: KeySlot) {
        self.took(key);
        self.keys.mark_served(key, self.grants);
    }

    /// Counts a permit taken by a call of `key` (granted from the queue, or
    /// taken at once by a keyed call) among its recent grants.
    pub(super) fn took(&mut self, key: KeySlot) {
        self.grants += 1;
        let half_life = half_life(self.limit);
        self.keys.add_recent(key, self.grants, half_life);
    }

    /// The waiter a full queue gives up for an arrival of `rank`: the newest
    /// (in a standing codel queue: the stalest) of the heaviest key of the
    /// least critical rank below `rank`. Its owner is refused 503 `displaced`.
    pub(super) fn below(&self, rank: Criticality, in_use: usize) -> Option<usize> {
        let lower = Criticality::ALL
            .into_iter()
            .rev()
            .take_while(|&lower| lower < rank)
            .find(|&lower| self.waiters.len_of(lower) > 0)?;
        let (key, _) = self.heaviest(lower, in_use)?;
        self.waiters.end(key, lower, !self.newest_first)
    }

    /// The waiter a full queue gives up for an arrival of `key` and `rank`
    /// (when no less critical waiter can go): the newest (in a standing codel
    /// queue: the stalest) of the heaviest key waiting at `rank`, if `key`
    /// holds fewer calls (in flight plus waiting, for its weight) than that
    /// key. Its owner is refused 429 `fair_share`.
    pub(super) fn unfair(&self, key: KeySlot, rank: Criticality, in_use: usize) -> Option<usize> {
        let (heaviest, load) = self.heaviest(rank, in_use)?;
        if heaviest == key || !self.total(key, in_use).below(load) {
            return None;
        }
        self.waiters.end(heaviest, rank, !self.newest_first)
    }

    /// The key with waiters of `rank` that holds the most calls (in flight
    /// plus waiting) for its weight, with that load; among equals, the one
    /// whose newest waiter is newest.
    fn heaviest(&self, rank: Criticality, in_use: usize) -> Option<(KeySlot, Load)> {
        let newest = |key| {
            let index = self.waiters.end(key, rank, true);
            index.map_or(0, |index| self.waiters.stamp(index))
        };
        let mut heaviest: Option<(KeySlot, Load, u64)> = None;
        for &key in self.waiters.flows(rank) {
            let load = self.total(key, in_use);
            let age = newest(key);
            let heavier = heaviest.is_none_or(|(_, most, most_age)| {
                most.below(load) || (!load.below(most) && age > most_age)
            });
            if heavier {
                heaviest = Some((key, load, age));
            }
        }
        heaviest.map(|(key, load, _)| (key, load))
    }

    /// A waiter that stops waiting without a permit (its own timeout, drop
    /// or close) leaves its key's count.
    pub(super) fn left(&mut self, key: KeySlot) {
        self.keys.add_waiting(key, -1);
    }

    /// Whether the waiter at `index` waited longer than codel's target, by
    /// the latest time the queue knows, while the queue stands.
    pub(super) fn is_stale(&self, index: usize) -> bool {
        let Some(codel) = &self.codel else {
            return false;
        };
        self.newest_first
            && self
                .waiters
                .arrived(index)
                .is_some_and(|at| codel.overstayed(at))
    }
}
