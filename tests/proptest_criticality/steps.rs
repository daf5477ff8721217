//! The model's transitions: arrivals, polls, releases, abandoned waits,
//! limit and reserve changes, each as the contract states it.

use super::{index, Holder, Model, Outcome, Policy, Standing, Waiter, RANKS};
use edgeshed::admission::Criticality;
use edgeshed::error::OverloadCause;

impl Model {
    /// A call arrives and is polled once.
    pub fn arrive(&mut self, id: u64, rank: Criticality, key: Option<u8>) -> Outcome {
        if self.available > self.keep(rank) {
            assert!(
                !self.waiting().any(|w| w.rank >= rank),
                "a free slot for {rank:?} while a waiter of the same or a higher criticality waits"
            );
            self.available -= 1;
            self.counts.admitted[index(rank)] += 1;
            self.holders.push(Holder {
                id,
                rank,
                key,
                epoch: self.epoch,
            });
            return Outcome::Admitted;
        }
        let (max_queue, timeout) = match self.policy {
            Policy::Wait => (usize::MAX, None),
            Policy::Queue {
                max_queue,
                timeout,
                codel_target,
            } if max_queue > 0 => {
                let standing = self.since.is_some_and(|since| self.now - since > timeout);
                match codel_target {
                    Some(target) if standing => {
                        self.newest_first = true;
                        (max_queue, Some(target))
                    }
                    _ => (max_queue, Some(timeout)),
                }
            }
            _ => return self.refuse_for_capacity(rank, OverloadCause::Shed),
        };
        if let Some(key) = key {
            let others_wait = self
                .waiting()
                .any(|w| w.key.is_some() && w.key != Some(key));
            if self.holding(key) * self.active_keys() > self.limit && others_wait {
                self.counts.fair_share += 1;
                return Outcome::FairShare;
            }
        }
        let was_empty = self.waiting().next().is_none();
        if self.waiting().count() >= max_queue {
            let waiters = &self.waiters;
            let victim = RANKS
                .into_iter()
                .rev()
                .filter(|&lower| lower < rank)
                .find_map(|lower| {
                    (0..waiters.len())
                        .filter(|&i| {
                            waiters[i].standing == Standing::Waiting && waiters[i].rank == lower
                        })
                        .max_by_key(|&i| waiters[i].seq)
                });
            let Some(victim) = victim else {
                return self.refuse_for_capacity(rank, OverloadCause::Shed);
            };
            let victim = &mut self.waiters[victim];
            victim.standing = Standing::Displaced;
            self.counts.displaced[index(victim.rank)] += 1;
        }
        if was_empty {
            self.since = Some(self.now);
        }
        self.seq += 1;
        self.waiters.push(Waiter {
            id,
            rank,
            key,
            seq: self.seq,
            deadline: timeout.map(|timeout| self.now + timeout),
            standing: Standing::Waiting,
            epoch: 0,
        });
        Outcome::Pending
    }

    /// A refusal for lack of capacity: no lower criticality may hold more
    /// than its ceiling then (unless a tightening came after it was admitted).
    fn refuse_for_capacity(&mut self, rank: Criticality, cause: OverloadCause) -> Outcome {
        for lower in RANKS.into_iter().filter(|&lower| lower < rank) {
            let permits = || {
                self.holders.iter().map(|h| (h.rank, h.epoch)).chain(
                    self.waiters
                        .iter()
                        .filter(|w| w.standing == Standing::Granted)
                        .map(|w| (w.rank, w.epoch)),
                )
            };
            let below: Vec<u64> = permits()
                .filter(|&(r, _)| r <= lower)
                .map(|(_, e)| e)
                .collect();
            if below.iter().all(|&epoch| epoch == self.epoch) {
                assert!(
                    below.len() <= self.ceiling(lower),
                    "a {rank:?} call refused while calls up to {lower:?} hold {} slots, over their ceiling {}",
                    below.len(),
                    self.ceiling(lower)
                );
            }
        }
        if cause == OverloadCause::QueueTimeout {
            self.counts.queue_timeouts[index(rank)] += 1;
        } else {
            self.counts.shed[index(rank)] += 1;
        }
        Outcome::Overloaded(cause)
    }

    /// A waiting call is polled.
    pub fn poll(&mut self, id: u64) -> Outcome {
        let at = self
            .waiters
            .iter()
            .position(|w| w.id == id)
            .expect("a queued call");
        let waiter = self.waiters[at].clone();
        match waiter.standing {
            Standing::Granted => {
                self.waiters.remove(at);
                self.counts.admitted[index(waiter.rank)] += 1;
                let (rank, key, epoch) = (waiter.rank, waiter.key, waiter.epoch);
                self.holders.push(Holder {
                    id,
                    rank,
                    key,
                    epoch,
                });
                Outcome::Admitted
            }
            Standing::Displaced => {
                self.waiters.remove(at);
                Outcome::Overloaded(OverloadCause::Displaced)
            }
            Standing::Waiting if waiter.deadline.is_some_and(|at| at <= self.now) => {
                self.waiters.remove(at);
                self.after_removal();
                self.refuse_for_capacity(waiter.rank, OverloadCause::QueueTimeout)
            }
            Standing::Waiting => Outcome::Pending,
        }
    }

    /// A waiting call is dropped.
    pub fn abandon(&mut self, id: u64) {
        let at = self
            .waiters
            .iter()
            .position(|w| w.id == id)
            .expect("a queued call");
        let waiter = self.waiters.remove(at);
        match waiter.standing {
            Standing::Granted => self.release_permit(),
            Standing::Waiting => self.after_removal(),
            Standing::Displaced => {}
        }
    }

    /// A held permit is dropped.
    pub fn release(&mut self, id: u64) {
        let at = self
            .holders
            .iter()
            .position(|h| h.id == id)
            .expect("a holder");
        self.holders.remove(at);
        self.release_permit();
    }

    fn release_permit(&mut self) {
        if self.debt > 0 {
            self.debt -= 1;
            return;
        }
        match self.top_waiting_rank() {
            Some(rank) if self.available + 1 > self.keep(rank) => self.grant(rank),
            _ => self.available += 1,
        }
    }

    /// Hands a permit to the waiter of `rank` served next: oldest first (or
    /// newest in a standing codel queue), keys under their fair share first.
    fn grant(&mut self, rank: Criticality) {
        let active = self.active_keys();
        let limit = self.limit;
        let mut order: Vec<usize> = (0..self.waiters.len())
            .filter(|&i| {
                self.waiters[i].standing == Standing::Waiting && self.waiters[i].rank == rank
            })
            .collect();
        order.sort_by_key(|&i| self.waiters[i].seq);
        if self.newest_first {
            order.reverse();
        }
        let under = |model: &Self, i: usize| {
            model.waiters[i]
                .key
                .is_none_or(|key| model.holding(key) * active < limit)
        };
        let keyed_wait = self.waiting().any(|w| w.key.is_some());
        let chosen = order
            .iter()
            .copied()
            .find(|&i| !keyed_wait || under(self, i))
            .or(order.first().copied())
            .expect("a waiter of that rank");
        // The fair share: no key at or over its share is admitted while a
        // waiter of another key of the same criticality is under its share.
        if let Some(key) = self.waiters[chosen].key {
            if self.holding(key) * active >= limit {
                assert!(
                    !order
                        .iter()
                        .any(|&i| self.waiters[i].key.is_some_and(|k| k != key) && under(self, i)),
                    "key {key} over its share admitted while another key waits under its share"
                );
            }
        }
        self.waiters[chosen].standing = Standing::Granted;
        self.waiters[chosen].epoch = self.epoch;
        self.after_removal();
    }

    fn after_removal(&mut self) {
        if self.waiting().next().is_none() {
            self.since = None;
            self.newest_first = false;
        }
    }

    pub fn set_limit(&mut self, limit: usize) {
        if limit >= self.limit {
            let added = limit - self.limit;
            let paid = added.min(self.debt);
            self.debt -= paid;
            self.available += added - paid;
        } else {
            let removed = self.limit - limit;
            let taken = removed.min(self.available);
            self.available -= taken;
            self.debt += removed - taken;
            self.epoch += 1;
        }
        self.limit = limit;
        self.grant_eligible();
    }

    pub fn set_reserve(&mut self, reserve: bool) {
        if reserve && !self.reserve {
            self.epoch += 1;
        }
        self.reserve = reserve;
        self.grant_eligible();
    }

    fn grant_eligible(&mut self) {
        while let Some(rank) = self.top_waiting_rank() {
            if self.available <= self.keep(rank) {
                break;
            }
            self.available -= 1;
            self.grant(rank);
        }
    }

    pub fn advance(&mut self, ms: u64) {
        self.now += ms;
    }
}
