//! The reference model of an admission with criticalities, reserves, keys
//! and codel, written from the design contract ("Criticality, fairness and
//! rate limits"), not from the implementation. It also asserts the
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
}

#[derive(Clone, Debug)]
pub struct Waiter {
    pub id: u64,
    pub rank: Criticality,
    pub key: Option<u8>,
    pub seq: u64,
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
    since: Option<u64>,
    newest_first: bool,
    seq: u64,
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
            since: None,
            newest_first: false,
            seq: 0,
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

    fn keep(&self, rank: Criticality) -> usize {
        self.limit - self.ceiling(rank)
    }

    pub fn in_use(&self) -> usize {
        self.limit + self.debt - self.available
    }

    pub fn waiting(&self) -> impl Iterator<Item = &Waiter> {
        self.waiters
            .iter()
            .filter(|w| w.standing == Standing::Waiting)
    }

    /// Permits held by `key`'s calls, handed-over ones included.
    pub fn holding(&self, key: u8) -> usize {
        let held = self.holders.iter().filter(|h| h.key == Some(key)).count();
        held + self
            .waiters
            .iter()
            .filter(|w| w.standing == Standing::Granted && w.key == Some(key))
            .count()
    }

    pub fn active_keys(&self) -> usize {
        (0..=u8::MAX)
            .filter(|&key| self.holding(key) > 0 || self.waiting().any(|w| w.key == Some(key)))
            .count()
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
                self.available <= self.keep(rank),
                "a {rank:?} waiter could take a free permit"
            );
        }
    }
}
