//! Everything the semaphore decides under its lock: who gets a returned
//! permit (the most critical waiting rank, then fair queueing between keys,
//! oldest or — in a standing codel queue — newest first), who enters the
//! queue, who a full one gives up (limit and reserve changes: `resize.rs`).
//!
//! Each operation restores, before it unlocks, the invariant the fast paths
//! rely on (see `state.rs`): no waiter could take a free permit.

use super::keys::KeySlot;
use super::queue::Queue;
use super::state::{Inner, CLOSED, ONE, SLOW};
use super::waiters::{Place, Standing, Tag};
use super::wakers::Wakers;
use super::AcquireError;
use crate::criticality::Criticality;
use crate::sync::Ordering;
use crate::time::Instant;
use crate::Key;
use core::task::Waker;

/// What an acquisition asks for: its criticality, its key and weight (for
/// fair queueing), how long the queue may be, and when it arrived (codel).
#[derive(Clone, Debug)]
pub(crate) struct Ask {
    pub(crate) rank: Criticality,
    pub(crate) key: Option<Key>,
    pub(crate) weight: u32,
    pub(crate) max_waiters: usize,
    pub(crate) at: Option<Instant>,
}

/// How a waiter entered: it took a permit at once (the key slot counted
/// for it, `None` for a keyless call), or it is queued; with the waiters it
/// woke (one given up to make room, those a lent reserve let in).
pub(super) enum Entered {
    Taken(Option<KeySlot>, Wakers),
    Queued(Place, Wakers),
}

impl Inner {
    /// Permits out (in flight or handed over), with `available` free.
    fn in_use(queue: &Queue, available: usize) -> usize {
        (queue.limit + queue.debt).saturating_sub(available)
    }

    /// Returns one permit with the queue locked: pays debt first, then the
    /// waiter to serve next if it may take it (a stale waiter at the head of
    /// a standing codel queue is refused instead), then the pool. Returns
    /// the wakers to call once unlocked.
    pub(super) fn release_locked(&self, queue: &mut Queue) -> Wakers {
        let mut wakers = Wakers::default();
        if queue.debt > 0 {
            queue.debt -= 1;
            self.sync_slow_flag(queue);
            return wakers;
        }
        // The permit being returned counts as free.
        let available = self.available() + 1;
        let in_use = Self::in_use(queue, available);
        while let Some(rank) = queue.waiters.top_rank() {
            let keep = self.keep_now(queue, rank, in_use);
            if available <= keep {
                break;
            }
            let Some(index) = queue.pick(rank, in_use) else {
                break;
            };
            if queue.is_stale(index) {
                wakers.push(self.give_up(queue, index, Standing::Stale));
                continue;
            }
            wakers.push(self.grant(queue, index));
            if keep < queue.keep(rank) {
                // A lent reserve: the permits it kept free go out too.
                self.grant_eligible_locked(queue, &mut wakers);
            }
            self.sync_slow_flag(queue);
            return wakers;
        }
        self.add_to_pool(queue, 1);
        if let Some(codel) = &mut queue.codel {
            codel.went_idle();
        }
        wakers
    }

    /// Hands free permits to every waiter that may take one now (after the
    /// limit or the reserve changed); collects their wakers.
    pub(super) fn grant_eligible_locked(&self, queue: &mut Queue, wakers: &mut Wakers) {
        while let Some(rank) = queue.waiters.top_rank() {
            let available = self.available();
            let in_use = Self::in_use(queue, available);
            let keep = self.keep_now(queue, rank, in_use);
            if available <= keep {
                break;
            }
            let Some(index) = queue.pick(rank, in_use) else {
                break;
            };
            if queue.is_stale(index) {
                wakers.push(self.give_up(queue, index, Standing::Stale));
                continue;
            }
            if self.take_above(keep).is_err() {
                break;
            }
            wakers.push(self.grant(queue, index));
        }
        self.sync_slow_flag(queue);
    }

    /// Hands a permit to the queued waiter at `index`.
    fn grant(&self, queue: &mut Queue, index: usize) -> Option<Waker> {
        let (waker, tag) = queue.waiters.take_out(index, Standing::Granted)?;
        queue.handed[tag.rank] += 1;
        queue.keys.add_holding(tag.key, 1);
        queue.keys.add_waiting(tag.key, -1);
        queue.served(tag.key);
        waker
    }

    /// Takes a permit for `ask` if it may have one now, or queues it
    /// (making room in a full queue by giving up a less critical waiter, or
    /// one of a key holding more), or refuses it.
    pub(super) fn enqueue_locked(
        &self,
        queue: &mut Queue,
        ask: &Ask,
        waker: &Waker,
    ) -> Result<Entered, AcquireError> {
        let slot = queue.keys.slot(ask.key.as_ref(), ask.weight);
        let entered = self.enter_locked(queue, ask, slot.unwrap_or(KeySlot::KEYLESS), waker);
        if let Some(slot) = slot {
            // Refused: a key made for this call alone is forgotten again.
            queue.keys.forget_idle(slot);
        }
        entered
    }

    fn enter_locked(
        &self,
        queue: &mut Queue,
        ask: &Ask,
        key: KeySlot,
        waker: &Waker,
    ) -> Result<Entered, AcquireError> {
        let rank = ask.rank;
        let mut wakers = Wakers::default();
        if self.note_arrival(queue, rank, Self::in_use(queue, self.available())) {
            // Its reserve is lent from now on: its waiters go first.
            self.grant_eligible_locked(queue, &mut wakers);
        }
        let keep = self.keep_now(queue, rank, Self::in_use(queue, self.available()));
        let mut state = self.state.load(Ordering::Acquire);
        let victim = loop {
            if state & CLOSED != 0 {
                return Err(AcquireError::Closed);
            }
            let (next, victim) = if state / ONE > keep {
                (state - ONE, None)
            } else {
                (state | SLOW, self.make_room(queue, ask, key, state / ONE)?)
            };
            match self
                .state
                .compare_exchange(state, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) if next < state => {
                    queue.keys.add_holding(key, 1);
                    if key != KeySlot::KEYLESS {
                        queue.took(key);
                    }
                    if let Some(codel) = &mut queue.codel {
                        // It found a free permit: one was idle.
                        codel.went_idle();
                    }
                    let slot = (key != KeySlot::KEYLESS).then_some(key);
                    return Ok(Entered::Taken(slot, wakers));
                }
                Ok(_) => break victim,
                Err(actual) => state = actual,
            }
        };
        // Queued (and counted for its key) before the victim leaves: a
        // victim of the same key must not make the key's entry forgotten.
        let place = queue.waiters.push(waker.clone(), Tag { rank, key }, ask.at);
        queue.keys.add_waiting(key, 1);
        if let Some((index, standing)) = victim {
            wakers.push(self.give_up(queue, index, standing));
        }
        Ok(Entered::Queued(place, wakers))
    }

    /// For an arrival of `key` that must wait (with `available` permits
    /// free): refuses it if its key is over its fair share while others
    /// wait, or if the queue is full and nobody may be given up for it;
    /// otherwise the waiter to give up, if the queue is full.
    fn make_room(
        &self,
        queue: &Queue,
        ask: &Ask,
        key: KeySlot,
        available: usize,
    ) -> Result<Option<(usize, Standing)>, AcquireError> {
        let in_use = Self::in_use(queue, available);
        if queue.over_share(key, in_use) && queue.others_waiting(key, ask.rank) {
            return Err(AcquireError::FairShare);
        }
        if queue.waiters.len() < ask.max_waiters {
            return Ok(None);
        }
        if ask.max_waiters == 0 {
            return Err(AcquireError::QueueFull);
        }
        if let Some(index) = queue.below(ask.rank, in_use) {
            return Ok(Some((index, Standing::Displaced)));
        }
        match queue.unfair(key, ask.rank, in_use) {
            Some(index) => Ok(Some((index, Standing::Unfair))),
            None => Err(AcquireError::QueueFull),
        }
    }

    /// Takes the waiter at `index` out of the queue without a permit, as
    /// `standing` says (displaced, given up for the fair share, stale);
    /// counts it.
    fn give_up(&self, queue: &mut Queue, index: usize, standing: Standing) -> Option<Waker> {
        let displaced = matches!(standing, Standing::Displaced);
        let (waker, tag) = queue.waiters.take_out(index, standing)?;
        if displaced {
            self.displaced[tag.rank].fetch_add(1, Ordering::Relaxed);
        }
        queue.left(tag.key);
        waker
    }

    /// A keyed permit comes back: its key holds one fewer, then the permit
    /// is returned as any other. Returns the wakers to call once unlocked.
    pub(super) fn release_keyed_locked(&self, queue: &mut Queue, slot: KeySlot) -> Wakers {
        queue.keys.add_holding(slot, -1);
        self.release_locked(queue)
    }

    /// Codel's test for an arrival at `now` that found no free permit:
    /// whether the queue stands (see `queue/codel.rs`). While it stands it is
    /// served newest first.
    pub(super) fn standing_locked(&self, queue: &mut Queue, now: Instant) -> bool {
        let idle = self.take_idle_note();
        let Some(codel) = &mut queue.codel else {
            return false;
        };
        if idle {
            codel.went_idle();
        }
        let standing = codel.arrival(now);
        queue.newest_first = standing;
        standing
    }
}
