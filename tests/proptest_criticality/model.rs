//! The reference model of an admission with criticalities, reserves, keys
//! (fair queueing, the keyless key) and codel, written from the design
//! contract ("Criticality, fairness and rate limits", revised in wave 4),
//! not from the implementation. Where the contract leaves a choice open, the
//! model states the one the library documents: the heaviest key gives up
//! its newest waiter (the stalest in a standing codel queue), ties going to
//! the key with the newest waiter; the key with the least service (the
//! permits it holds, 2^16 each, plus its recent grants: each permit it took
//! counts 2^16, halved every max(4 × limit, 8) grants to
//! anyone and linearly in between; the keyless key's permits taken at once
//! do not count) is served
//! first, ties going to the key served longest ago, then to the oldest
//! waiter. It also asserts the
//! contract's properties on its own state; the harness checks that the real
//! admission agrees with it after every step.

use edgeshed::admission::Criticality;
use edgeshed::error::OverloadCause;

#[path = "steps.rs"]
mod steps;

/// Most important first, like `Criticality::ALL`.
pub const RANKS: [Criticality; 3] = [
    Criticality::Critical,
    Criticality::Default,
    Criticality::Sheddable,
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    Shed,
    Wait,
    Queue {
        max_queue: usize,
        timeout: u64,
        codel_target: Option<u64>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Admitted,
    Pending,
    Overloaded(OverloadCause),
    FairShare,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    Waiting,
    Granted,
    Displaced,
    /// Given up for an arrival of a key holding less (429 fair_share).
    Unfair,
    /// Refused at the head of a standing codel queue (503 queue_timeout).
    Stale,
}

#[derive(Clone, Debug)]
pub struct Waiter {
    pub id: u64,
    pub rank: Criticality,
    pub key: Option<u8>,
    pub seq: u64,
    pub at: u64,
    pub deadline: Option<u64>,
    pub standing: Standing,
    /// The tightening epoch when it was granted.
    pub epoch: u64,
}

#[derive(Clone, Debug)]
pub struct Holder {
    pub id: u64,
    pub rank: Criticality,
    pub key: Option<u8>,
    pub epoch: u64,
}

#[derive(Debug, Default)]
pub struct Counts {
    pub admitted: [u64; 3],
    pub shed: [u64; 3],
    pub queue_timeouts: [u64; 3],
    pub displaced: [u64; 3],
    pub fair_share: u64,
}

#[derive(Debug)]
pub struct Model {
    pub policy: Policy,
    pub reserve: bool,
    pub limit: usize,
    pub debt: usize,
    pub available: usize,
    pub now: u64,
    pub waiters: Vec<Waiter>,
    pub holders: Vec<Holder>,
    pub counts: Counts,
    /// Codel: when the busy spell began, until when the queue stands, the
    /// latest waiting arrival, and whether a permit went idle since.
    busy_since: Option<u64>,
    standing_until: Option<u64>,
    codel_now: u64,
    idle: bool,
    newest_first: bool,
    seq: u64,
    /// Per key (`None`: the keyless key), the grant number of its last
    /// queue grant; forgotten with an idle keyed key.
    served: Vec<(Option<u8>, u64)>,
    /// Per key, its recent grants as of the grant number beside them;
    /// forgotten with an idle keyed key.
    recent: Vec<(Option<u8>, u64, u64)>,
    grants: u64,
    /// Per rank (sheddable, default), locked-path arrivals since a more
    /// critical call was last seen, up to `lend_after` (lending starts out on).
    quiet: [usize; 2],
    /// Bumped whenever the ceilings may have dropped below what is held
    /// (a lower limit, a reserve switched on).
    epoch: u64,
}

pub fn index(rank: Criticality) -> usize {
    match rank {
        Criticality::Sheddable => 0,
        Criticality::Default => 1,
        Criticality::Critical => 2,
    }
}

impl Model {
    pub fn new(limit: usize, policy: Policy, reserve: bool) -> Self {
        Self {
            policy,
            reserve,
            limit,
            debt: 0,
            available: limit,
            now: 0,
            waiters: Vec::new(),
            holders: Vec::new(),
            counts: Counts::default(),
            busy_since: None,
            standing_until: None,
            codel_now: 0,
            idle: false,
            newest_first: false,
            seq: 0,
            served: Vec::new(),
            recent: Vec::new(),
            grants: 0,
            quiet: [usize::MAX; 2],
            epoch: 0,
        }
    }

    /// The most calls in flight at which a call of `rank` is still admitted
    /// (the contract's ceilings: 7 / 9 / 10 of 10, 1 / 1 / 2 of 2, ...).
    pub fn ceiling(&self, rank: Criticality) -> usize {
        let limit = self.limit;
        if !self.reserve || limit <= 1 {
            return limit;
        }
        let share = match rank {
            Criticality::Critical => return limit,
            Criticality::Default => limit * 9 / 10,
            Criticality::Sheddable => limit * 7 / 10,
        };
        share.clamp(1, limit - 1)
    }

    pub fn keep(&self, rank: Criticality) -> usize {
        self.limit - self.ceiling(rank)
    }

    /// The contract's loan of a reserve: lent once no higher call was seen
    /// in the last `max(8, 4 × limit)` locked-path arrivals of the rank, and
    /// while none is present (holding or waiting).
    pub fn keep_now(&self, rank: Criticality) -> usize {
        let keep = self.keep(rank);
        if keep == 0 || rank == Criticality::Critical {
            return keep;
        }
        if self.quiet[index(rank)] < self.lend_after() || self.higher_present(rank) {
            keep
        } else {
            0
        }
    }

    pub fn lend_after(&self) -> usize {
        (4 * self.limit).max(8)
    }

    pub fn higher_present(&self, rank: Criticality) -> bool {
        RANKS
            .into_iter()
            .filter(|&higher| higher > rank)
            .any(|higher| self.held_by(higher) > 0 || self.waiting().any(|w| w.rank == higher))
    }

    /// A locked-path arrival of `rank`: the lower ranks' loans end; its own
    /// quiet spell grows unless a higher call is present. Whether its loan
    /// began.
    pub fn note_arrival(&mut self, rank: Criticality) -> bool {
        for lower in RANKS.into_iter().filter(|&lower| lower < rank) {
            self.quiet[index(lower)] = 0;
        }
        if self.keep(rank) == 0 || rank == Criticality::Critical {
            return false;
        }
        if self.higher_present(rank) {
            self.quiet[index(rank)] = 0;
            return false;
        }
        let threshold = self.lend_after();
        let before = self.quiet[index(rank)];
        self.quiet[index(rank)] = before.saturating_add(1).min(threshold);
        before < threshold && self.quiet[index(rank)] >= threshold
    }

    pub fn in_use(&self) -> usize {
        self.limit + self.debt - self.available
    }

    pub fn waiting(&self) -> impl Iterator<Item = &Waiter> {
        self.waiters
            .iter()
            .filter(|w| w.standing == Standing::Waiting)
    }

    /// Permits held by `key`'s calls (`None`: the keyless key's), handed-over
    /// ones included.
    pub fn holding(&self, key: Option<u8>) -> usize {
        let held = self.holders.iter().filter(|h| h.key == key).count();
        held + self
            .waiters
            .iter()
            .filter(|w| w.standing == Standing::Granted && w.key == key)
            .count()
    }

    /// Calls of `key` waiting.
    pub fn waiting_of(&self, key: Option<u8>) -> usize {
        self.waiting().filter(|w| w.key == key).count()
    }

    fn is_active(&self, key: Option<u8>) -> bool {
        self.holding(key) > 0 || self.waiting_of(key) > 0
    }

    /// Keys with calls in flight or waiting, the keyless key among them.
    pub fn active_keys(&self) -> usize {
        usize::from(self.is_active(None)) + self.active_keyed_keys()
    }

    /// Keys of keyed calls in flight or waiting.
    pub fn active_keyed_keys(&self) -> usize {
        (0..=u8::MAX)
            .filter(|&key| self.is_active(Some(key)))
            .count()
    }

    /// When `key` was last served from the queue (0: not since it was new).
    pub fn served(&self, key: Option<u8>) -> u64 {
        self.served
            .iter()
            .find(|(k, _)| *k == key)
            .map_or(0, |&(_, at)| at)
    }

    /// `key`'s recent grants now (2^16 a grant).
    pub fn recent(&self, key: Option<u8>) -> u64 {
        let half_life = self.limit.saturating_mul(4).max(8) as u64;
        self.recent
            .iter()
            .find(|(k, _, _)| *k == key)
            .map_or(0, |&(_, recent, at)| {
                let since = self.grants - at;
                let whole = if since / half_life >= 64 {
                    0
                } else {
                    recent >> (since / half_life)
                };
                whole - (whole / 2) * (since % half_life) / half_life
            })
    }

    /// `key`'s service: its permits held (2^16 each) plus its recent grants.
    pub fn service(&self, key: Option<u8>) -> u64 {
        (self.holding(key) as u64 * (1 << 16)) + self.recent(key)
    }

    /// `key` took a permit: one more grant, counted among its recent ones.
    pub fn took(&mut self, key: Option<u8>) {
        self.grants += 1;
        let recent = self.recent(key) + (1 << 16);
        self.recent.retain(|&(k, _, _)| k != key);
        self.recent.push((key, recent, self.grants));
    }

    /// Forgets the grant numbers of keyed keys that hold and wait for nothing.
    pub fn forget_idle(&mut self) {
        let active: Vec<bool> = self
            .recent
            .iter()
            .map(|&(key, _, _)| key.is_none() || self.is_active(key))
            .collect();
        let mut flags = active.into_iter();
        self.recent.retain(|_| flags.next().unwrap_or(true));
        let active: Vec<bool> = self
            .served
            .iter()
            .map(|&(key, _)| key.is_none() || self.is_active(key))
            .collect();
        let mut flags = active.into_iter();
        self.served.retain(|_| flags.next().unwrap_or(true));
    }

    /// Permits held by calls of `rank` (handed-over ones included).
    pub fn held_by(&self, rank: Criticality) -> usize {
        self.holders.iter().filter(|h| h.rank == rank).count()
            + self
                .waiters
                .iter()
                .filter(|w| w.standing == Standing::Granted && w.rank == rank)
                .count()
    }

    fn top_waiting_rank(&self) -> Option<Criticality> {
        RANKS
            .into_iter()
            .find(|&rank| self.waiting().any(|w| w.rank == rank))
    }

    /// The invariant the fast paths rely on: no waiter could take a free permit.
    pub fn check_invariant(&self) {
        if let Some(rank) = self.top_waiting_rank() {
            assert!(
                self.available <= self.keep_now(rank),
                "a {rank:?} waiter could take a free permit"
            );
        }
    }
}
