//! The model's transitions: arrivals, polls, releases, abandoned waits,
//! limit and reserve changes, each as the contract states it.

use super::{index, Holder, Model, Outcome, Policy, Standing, Waiter, RANKS};

/// The epoch of a permit taken on loan from a reserve: it may hold more than
/// its rank's ceiling, so the ceiling check leaves it out.
const LENT: u64 = u64::MAX;
use edgeshed::admission::Criticality;
use edgeshed::error::OverloadCause;

impl Model {
    /// A call arrives and is polled once.
    pub fn arrive(&mut self, id: u64, rank: Criticality, key: Option<u8>) -> Outcome {
        let outcome = self.enter(id, rank, key);
        self.forget_idle();
        outcome
    }

    fn enter(&mut self, id: u64, rank: Criticality, key: Option<u8>) -> Outcome {
        let codel = matches!(
            self.policy,
            Policy::Queue {
                codel_target: Some(_),
                ..
            }
        );
        if self.available > self.keep(rank) {
            assert!(
                !self.waiting().any(|w| w.rank >= rank),
                "a free slot for {rank:?} while a waiter of the same or a higher criticality waits"
            );
            self.available -= 1;
            self.counts.admitted[index(rank)] += 1;
            self.sight(rank);
            self.holders.push(Holder {
                id,
                rank,
                key,
                epoch: self.epoch,
            });
            if key.is_some() {
                self.took(key);
            }
            // A permit was idle.
            self.idle |= codel;
            return Outcome::Admitted;
        }
        let (max_queue, timeout) = match self.policy {
            Policy::Wait => (usize::MAX, None),
            Policy::Queue {
                max_queue,
                timeout,
                codel_target,
            } if max_queue > 0 => match codel_target {
                Some(target) if self.codel_arrival(timeout) => (max_queue, Some(target)),
                _ => (max_queue, Some(timeout)),
            },
            _ => {
                // A shedding policy: a loan of the reserve, if any.
                if self.reserve && self.limit >= 2 {
                    self.note_arrival(rank);
                    if self.available > self.keep_now(rank) {
                        return self.admit_lent(id, rank, key);
                    }
                }
                return self.refuse_for_capacity(rank, OverloadCause::Shed);
            }
        };
        if self.note_arrival(rank) {
            self.grant_eligible();
        }
        if self.available > self.keep_now(rank) {
            return self.admit_lent(id, rank, key);
        }
        // Fair share, the keyless key included: over its share while
        // another key waits at its criticality or above, a call is refused
        // instead of queued. The share is rounded up: a key may always
        // hold one permit.
        let others_wait = self.waiting().any(|w| w.key != key && w.rank >= rank);
        if self.holding(key) > self.limit.div_ceil(self.active_keys().max(1)) && others_wait {
            self.counts.fair_share += 1;
            return Outcome::FairShare;
        }
        if self.waiting().count() >= max_queue {
            if let Some(victim) = self.victim_below(rank) {
                let victim = &mut self.waiters[victim];
                victim.standing = Standing::Displaced;
                self.counts.displaced[index(victim.rank)] += 1;
            } else if let Some(victim) = self.victim_unfair(key, rank) {
                self.waiters[victim].standing = Standing::Unfair;
            } else {
                return self.refuse_for_capacity(rank, OverloadCause::Shed);
            }
        }
        self.seq += 1;
        self.waiters.push(Waiter {
            id,
            rank,
            key,
            seq: self.seq,
            at: self.now,
            deadline: timeout.map(|timeout| self.now + timeout),
            standing: Standing::Waiting,
            epoch: 0,
        });
        Outcome::Pending
    }

    /// Admitted on the locked path: a permit its reserve would have kept.
    fn admit_lent(&mut self, id: u64, rank: Criticality, key: Option<u8>) -> Outcome {
        // It found a free permit: one was idle.
        self.idle |= matches!(
            self.policy,
            Policy::Queue {
                codel_target: Some(_),
                ..
            }
        );
        self.available -= 1;
        self.counts.admitted[index(rank)] += 1;
        self.sight(rank);
        self.holders.push(Holder {
            id,
            rank,
            key,
            epoch: LENT,
        });
        if key.is_some() {
            self.took(key);
        }
        Outcome::Admitted
    }

    /// Codel's state at an arrival that must wait: a busy spell (no permit
    /// idle) longer than the interval makes the queue stand, for one interval
    /// after it was last seen.
    fn codel_arrival(&mut self, interval: u64) -> bool {
        self.codel_now = self.codel_now.max(self.now);
        if std::mem::take(&mut self.idle) {
            self.busy_since = None;
        }
        let since = *self.busy_since.get_or_insert(self.now);
        if self.now - since > interval {
            self.standing_until = Some(self.now + interval);
        }
        self.newest_first = self.standing_until.is_some_and(|until| self.now < until);
        self.newest_first
    }

    /// Positions of the waiting calls of `key` of `rank`, oldest first.
    fn flow(&self, key: Option<u8>, rank: Criticality) -> Vec<usize> {
        let mut flow: Vec<usize> = (0..self.waiters.len())
            .filter(|&i| {
                let w = &self.waiters[i];
                w.standing == Standing::Waiting && w.rank == rank && w.key == key
            })
            .collect();
        flow.sort_by_key(|&i| self.waiters[i].seq);
        flow
    }

    fn keys_waiting(&self, rank: Criticality) -> Vec<Option<u8>> {
        let mut keys: Vec<Option<u8>> = self
            .waiting()
            .filter(|w| w.rank == rank)
            .map(|w| w.key)
            .collect();
        keys.sort();
        keys.dedup();
        keys
    }

    /// The key of `rank` holding the most (in flight plus waiting), ties to
    /// the one whose newest waiter is newest; with its load.
    fn heaviest(&self, rank: Criticality) -> Option<(Option<u8>, usize)> {
        self.keys_waiting(rank)
            .into_iter()
            .map(|key| {
                let load = self.holding(key) + self.waiting_of(key);
                let newest = self
                    .flow(key, rank)
                    .last()
                    .map_or(0, |&i| self.waiters[i].seq);
                (key, load, newest)
            })
            .max_by_key(|&(_, load, newest)| (load, newest))
            .map(|(key, load, _)| (key, load))
    }

    /// The waiter a full flow gives up: its newest, or in a standing codel
    /// queue its stalest.
    fn given_up(&self, key: Option<u8>, rank: Criticality) -> Option<usize> {
        let flow = self.flow(key, rank);
        if self.newest_first {
            flow.first().copied()
        } else {
            flow.last().copied()
        }
    }

    /// A full queue's victim for a `rank` arrival: of the least critical rank
    /// below it with waiters, the heaviest key's.
    fn victim_below(&self, rank: Criticality) -> Option<usize> {
        let lower = RANKS
            .into_iter()
            .rev()
            .filter(|&lower| lower < rank)
            .find(|&lower| self.waiting().any(|w| w.rank == lower))?;
        let (key, _) = self.heaviest(lower)?;
        self.given_up(key, lower)
    }

    /// A full queue's victim for an arrival of `key` holding less than the
    /// heaviest key waiting at `rank`: that key's.
    fn victim_unfair(&self, key: Option<u8>, rank: Criticality) -> Option<usize> {
        let (heaviest, load) = self.heaviest(rank)?;
        let own = self.holding(key) + self.waiting_of(key);
        if heaviest == key || own >= load {
            return None;
        }
        self.given_up(heaviest, rank)
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
        let outcome = match waiter.standing {
            Standing::Granted => {
                self.waiters.remove(at);
                self.counts.admitted[index(waiter.rank)] += 1;
                let (rank, key, epoch) = (waiter.rank, waiter.key, waiter.epoch);
                self.sight(rank);
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
            Standing::Unfair => {
                self.waiters.remove(at);
                self.counts.fair_share += 1;
                Outcome::FairShare
            }
            Standing::Stale => {
                self.waiters.remove(at);
                self.counts.queue_timeouts[index(waiter.rank)] += 1;
                Outcome::Overloaded(OverloadCause::QueueTimeout)
            }
            Standing::Waiting if waiter.deadline.is_some_and(|at| at <= self.now) => {
                self.waiters.remove(at);
                self.refuse_for_capacity(waiter.rank, OverloadCause::QueueTimeout)
            }
            Standing::Waiting => Outcome::Pending,
        };
        self.forget_idle();
        outcome
    }

    /// A waiting call is dropped.
    pub fn abandon(&mut self, id: u64) {
        let at = self
            .waiters
            .iter()
            .position(|w| w.id == id)
            .expect("a queued call");
        let waiter = self.waiters.remove(at);
        self.forget_idle();
        if waiter.standing == Standing::Granted {
            self.release_permit();
        }
        self.forget_idle();
    }

    /// A held permit is dropped.
    pub fn release(&mut self, id: u64) {
        let at = self
            .holders
            .iter()
            .position(|h| h.id == id)
            .expect("a holder");
        self.holders.remove(at);
        self.forget_idle();
        self.release_permit();
        self.forget_idle();
    }

    fn release_permit(&mut self) {
        if self.debt > 0 {
            self.debt -= 1;
            return;
        }
        while let Some(rank) = self.top_waiting_rank() {
            let keep = self.keep_now(rank);
            if self.available < keep {
                break;
            }
            let chosen = self.pick(rank);
            if self.is_stale(chosen) {
                self.waiters[chosen].standing = Standing::Stale;
                continue;
            }
            let lent = self.available < self.keep(rank);
            self.grant(chosen, lent);
            if keep < self.keep(rank) {
                self.grant_eligible();
            }
            return;
        }
        self.available += 1;
        self.idle |= matches!(
            self.policy,
            Policy::Queue {
                codel_target: Some(_),
                ..
            }
        );
    }

    /// Whether the waiter at `chosen` reaches the head of a standing codel
    /// queue after waiting longer than the target (by the latest arrival).
    fn is_stale(&self, chosen: usize) -> bool {
        let Policy::Queue {
            codel_target: Some(target),
            ..
        } = self.policy
        else {
            return false;
        };
        self.newest_first && self.codel_now.saturating_sub(self.waiters[chosen].at) > target
    }

    /// The waiter of `rank` served next (fair queueing): the key with the
    /// least service (held permits plus recent grants), ties to the one served longest ago, then to the
    /// oldest waiter; its oldest waiter, or its newest in a standing codel
    /// queue.
    fn pick(&self, rank: Criticality) -> usize {
        let order = |key: Option<u8>| {
            let oldest = self
                .flow(key, rank)
                .first()
                .map_or(0, |&i| self.waiters[i].seq);
            (self.service(key), self.served(key), oldest)
        };
        let key = self
            .keys_waiting(rank)
            .into_iter()
            .min_by_key(|&key| order(key))
            .expect("a waiter of that rank");
        // Least service first: the key served has had no more service
        // than any other key waiting at that rank.
        for other in self.keys_waiting(rank) {
            assert!(
                self.service(key) <= self.service(other),
                "fair queueing picked a key served more lately"
            );
        }
        let flow = self.flow(key, rank);
        let chosen = if self.newest_first {
            flow.last()
        } else {
            flow.first()
        };
        *chosen.expect("a waiter of that key")
    }

    /// A call of `rank` took a permit: a sight of it, which ends the loans
    /// of the ranks below (however it took the permit).
    fn sight(&mut self, rank: Criticality) {
        for lower in RANKS.into_iter().filter(|&lower| lower < rank) {
            self.quiet[index(lower)] = 0;
        }
    }

    fn grant(&mut self, chosen: usize, lent: bool) {
        self.waiters[chosen].standing = Standing::Granted;
        self.waiters[chosen].epoch = if lent { LENT } else { self.epoch };
        let key = self.waiters[chosen].key;
        self.took(key);
        self.served.retain(|&(k, _)| k != key);
        self.served.push((key, self.grants));
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
            if self.available <= self.keep_now(rank) {
                break;
            }
            let chosen = self.pick(rank);
            if self.is_stale(chosen) {
                self.waiters[chosen].standing = Standing::Stale;
                continue;
            }
            let lent = self.available <= self.keep(rank);
            self.available -= 1;
            self.grant(chosen, lent);
        }
    }

    pub fn advance(&mut self, ms: u64) {
        self.now += ms;
    }
}
