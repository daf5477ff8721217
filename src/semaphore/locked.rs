//! Everything the semaphore decides under its lock: who gets a returned
//! permit (the most critical waiting rank, fair share between keys, oldest
//! or — in a standing codel queue — newest first), who enters the queue, who
//! is displaced from a full one, and limit and reserve changes.
//!
//! Each operation restores, before it unlocks, the invariant the fast paths
//! rely on (see `state.rs`): no waiter could take a free permit.

use super::keys::KeySlot;
use super::queue::Queue;
use super::state::{Inner, CLOSED, ONE, SLOW};
use super::waiters::{Place, Standing, Tag};
use super::AcquireError;
use crate::criticality::Criticality;
use crate::criticality::Reserve;
use crate::sync::Ordering;
use crate::time::Instant;
use crate::Key;
use core::task::Waker;

/// What an acquisition asks for: its criticality, its key (for the fair
/// share), how long the queue may be, and when it arrived (for codel).
#[derive(Clone, Debug)]
pub(crate) struct Ask {
    pub(crate) rank: Criticality,
    pub(crate) key: Option<Key>,
    pub(crate) max_waiters: usize,
    pub(crate) at: Option<Instant>,
}

/// How a waiter entered: it took a permit at once, or it is queued (and
/// maybe displaced a less critical waiter, whose waker is returned).
pub(super) enum Entered {
    Taken(Option<KeySlot>),
    Queued(Place, Option<Waker>),
}

impl Inner {
    /// Returns one permit with the queue locked: pays debt first, then the
    /// waiter to serve next if it may take it, then the pool. Returns the
    /// waker to call once unlocked.
    pub(super) fn release_locked(&self, queue: &mut Queue) -> Option<Waker> {
        if queue.debt > 0 {
            queue.debt -= 1;
            self.sync_slow_flag(queue);
            return None;
        }
        // The permit being returned counts as free.
        let free = self.available() + 1;
        if let Some(rank) = queue.waiters.top_rank() {
            if free > queue.keep(rank) {
                if let Some(index) = queue.pick(rank) {
                    let waker = self.grant(queue, index);
                    self.sync_slow_flag(queue);
                    return waker;
                }
            }
        }
        self.add_to_pool(queue, 1);
        None
    }

    /// Hands free permits to every waiter that may take one now (after the
    /// limit or the reserve changed); collects their wakers.
    fn grant_eligible_locked(&self, queue: &mut Queue, wakers: &mut Vec<Waker>) {
        while let Some(rank) = queue.waiters.top_rank() {
            let Some(index) = queue.pick(rank) else {
                break;
            };
            if self.take_above(queue.keep(rank)).is_err() {
                break;
            }
            wakers.extend(self.grant(queue, index));
        }
        self.sync_slow_flag(queue);
    }

    /// Hands a permit to the queued waiter at `index`.
    fn grant(&self, queue: &mut Queue, index: usize) -> Option<Waker> {
        let (waker, tag) = queue.waiters.take_out(index, Standing::Granted)?;
        if let Some(handed) = queue.handed.get_mut(tag.rank.index()) {
            *handed += 1;
        }
        if let Some(slot) = tag.key {
            queue.keys.add_holding(slot, 1);
            queue.keys.add_waiting(slot, -1);
        }
        queue.after_removal();
        waker
    }

    /// Takes a permit for `ask` if it may have one now, or queues it
    /// (displacing a less critical waiter from a full queue), or refuses it.
    pub(super) fn enqueue_locked(
        &self,
        queue: &mut Queue,
        ask: &Ask,
        waker: &Waker,
    ) -> Result<Entered, AcquireError> {
        let slot = ask.key.as_ref().and_then(|key| queue.keys.slot(key));
        let entered = self.enter_locked(queue, ask, slot, waker);
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
        slot: Option<KeySlot>,
        waker: &Waker,
    ) -> Result<Entered, AcquireError> {
        let rank = ask.rank;
        let keep = queue.keep(rank);
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            if state & CLOSED != 0 {
                return Err(AcquireError::Closed);
            }
            let next = if state / ONE > keep {
                state - ONE
            } else {
                if let Some(slot) = slot {
                    if queue.keys.over_share(slot, queue.limit)
                        && queue.keys.others_waiting(Some(slot))
                    {
                        return Err(AcquireError::FairShare);
                    }
                }
                if queue.waiters.len() >= ask.max_waiters
                    && (ask.max_waiters == 0 || queue.waiters.newest_below(rank).is_none())
                {
                    return Err(AcquireError::QueueFull);
                }
                state | SLOW
            };
            if let Err(actual) =
                self.state
                    .compare_exchange(state, next, Ordering::AcqRel, Ordering::Acquire)
            {
                state = actual;
                continue;
            }
            if next < state {
                if let Some(slot) = slot {
                    queue.keys.add_holding(slot, 1);
                }
                return Ok(Entered::Taken(slot));
            }
            if queue.waiters.len() == 0 {
                queue.standing_since = ask.at;
            }
            let victim = if queue.waiters.len() >= ask.max_waiters {
                queue.waiters.newest_below(rank)
            } else {
                None
            };
            // Queued (and counted for its key) before the victim leaves: a
            // victim of the same key must not make the key's entry forgotten.
            let place = queue.waiters.push(waker.clone(), Tag { rank, key: slot });
            if let Some(slot) = slot {
                queue.keys.add_waiting(slot, 1);
            }
            let displaced = victim.and_then(|victim| self.displace(queue, victim));
            return Ok(Entered::Queued(place, displaced));
        }
    }

    /// Takes the waiter at `index` out of the queue as displaced; counts it.
    fn displace(&self, queue: &mut Queue, index: usize) -> Option<Waker> {
        let (waker, tag) = queue.waiters.take_out(index, Standing::Displaced)?;
        if let Some(displaced) = self.displaced.get(tag.rank.index()) {
            displaced.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(slot) = tag.key {
            queue.keys.add_waiting(slot, -1);
        }
        waker
    }

    /// A keyed permit comes back: its key holds one fewer, then the permit
    /// is returned as any other. Returns the waker to call once unlocked.
    pub(super) fn release_keyed_locked(&self, queue: &mut Queue, slot: KeySlot) -> Option<Waker> {
        queue.keys.add_holding(slot, -1);
        self.release_locked(queue)
    }

    /// Changes the limit: raising it adds permits (debt first), lowering it
    /// takes free ones away and records the rest as debt; then every waiter
    /// that may now take a permit gets one. Returns their wakers.
    pub(super) fn set_limit_locked(&self, queue: &mut Queue, limit: usize) -> Vec<Waker> {
        self.resizing(true);
        if limit >= queue.limit {
            let added = limit - queue.limit;
            queue.set_limit(limit);
            let paid = added.min(queue.debt);
            queue.debt -= paid;
            self.add_to_pool(queue, added - paid);
        } else {
            let removed = queue.limit - limit;
            queue.set_limit(limit);
            let taken = self.take_available_locked(removed);
            queue.debt += removed - taken;
        }
        self.resized(queue)
    }

    /// Changes the reserve (see [`Reserve`]); returns the wakers of waiters
    /// that may now take a permit.
    pub(super) fn set_reserve_locked(&self, queue: &mut Queue, reserve: Reserve) -> Vec<Waker> {
        self.resizing(true);
        queue.reserve = reserve;
        queue.update_keeps();
        self.resized(queue)
    }

    fn resized(&self, queue: &mut Queue) -> Vec<Waker> {
        self.publish_keeps(queue);
        let mut wakers = Vec::new();
        self.grant_eligible_locked(queue, &mut wakers);
        self.resizing(false);
        wakers
    }

    /// Sets `CLOSED` and fails every waiter; returns their wakers.
    pub(super) fn close_locked(&self, queue: &mut Queue) -> Vec<Waker> {
        self.state.fetch_or(CLOSED, Ordering::AcqRel);
        let closed = queue.waiters.close_all();
        let mut wakers = Vec::with_capacity(closed.len());
        for (waker, tag) in closed {
            queue.left(tag);
            wakers.extend(waker);
        }
        self.sync_slow_flag(queue);
        wakers
    }

    /// Whether a queue has been standing (never empty) for longer than
    /// `interval` at `now`; if so, it is served newest first until it drains.
    pub(super) fn standing_locked(
        &self,
        queue: &mut Queue,
        now: Instant,
        interval: core::time::Duration,
    ) -> bool {
        let standing = queue
            .standing_since
            .is_some_and(|since| now.saturating_duration_since(since) > interval);
        if standing {
            queue.newest_first = true;
        }
        standing
    }
}
