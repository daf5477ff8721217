//! The semaphore's crate-internal side, for an [`Admission`](crate::admission::Admission):
//! acquisitions with a criticality and a key, the reserve, codel's test, and
//! the per-criticality counts its stats read.

use super::acquire::Acquire;
use super::locked::Ask;
use super::queue::codel::Codel;
use super::state::Miss;
use super::{Permit, Semaphore, TryAcquireError};
use crate::criticality::{Criticality, Reserve};
use crate::sync::lock;
use crate::time::Instant;
use crate::Key;
use core::time::Duration;

/// What [`Semaphore::queue_position`] found.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QueuePosition {
    /// Waiters served before the call, about.
    pub(crate) ahead: usize,
    /// Permits out (handed-over ones included).
    pub(crate) in_use: usize,
    /// Permits handed to waiters not picked up yet.
    pub(crate) handed: usize,
    /// The limit.
    pub(crate) limit: usize,
}

impl Semaphore {
    /// Takes a permit for a call of `rank` if one is free beyond what `rank`
    /// must leave for more critical calls.
    #[inline]
    pub(crate) fn try_acquire_as(&self, rank: Criticality) -> Result<Permit, TryAcquireError> {
        match self.take_fast(rank) {
            Ok(permit) => Ok(permit),
            Err(Miss::Locked) => self.try_acquire_locked(rank, None),
            Err(miss) => Err(miss.into()),
        }
    }

    /// [`try_acquire_as`](Self::try_acquire_as) for a call of `key`, which
    /// is counted for the fair share while it holds the permit.
    pub(crate) fn try_acquire_keyed(
        &self,
        rank: Criticality,
        key: &Key,
        weight: u32,
    ) -> Result<Permit, TryAcquireError> {
        self.try_acquire_locked(rank, Some((key, weight)))
    }

    fn try_acquire_locked(
        &self,
        rank: Criticality,
        key: Option<(&Key, u32)>,
    ) -> Result<Permit, TryAcquireError> {
        let mut queue = lock(&self.inner().queue);
        let slot = key.and_then(|(key, weight)| queue.keys.slot(Some(key), weight));
        // The reserve as configured: a loan is decided where the arrival is
        // counted for it (`enter_locked`, `try_acquire_lent`).
        let taken = self.inner().take_above(queue.keep(rank));
        match (taken, slot) {
            (Ok(()), slot) => {
                if let Some(slot) = slot {
                    queue.keys.add_holding(slot, 1);
                    queue.took(slot);
                }
                drop(queue);
                Ok(self.permit(rank, slot))
            }
            (Err(miss), slot) => {
                if let Some(slot) = slot {
                    queue.keys.forget_idle(slot);
                }
                Err(miss.into())
            }
        }
    }

    /// For a call that may not wait (a shedding policy) and found no permit
    /// on the fast path: a permit if its rank's reserve is lent to it now
    /// (see `lending.rs`); the arrival counts for the loan either way.
    pub(crate) fn try_acquire_lent(
        &self,
        rank: Criticality,
        key: Option<(&Key, u32)>,
    ) -> Option<Permit> {
        let inner = self.inner();
        if !inner.has_reserve() {
            // Nothing kept, nothing to lend: the shed path stays lock-free.
            return None;
        }
        let mut queue = lock(&inner.queue);
        let in_use = (queue.limit + queue.debt).saturating_sub(inner.available());
        // Nobody waits (a shedding policy), so a loan that starts here lets
        // in no waiter.
        let _ = inner.note_arrival(&mut queue, rank, in_use);
        let keep = inner.keep_now(&queue, rank, in_use);
        if inner.take_above(keep).is_err() {
            return None;
        }
        let slot = key.and_then(|(key, weight)| queue.keys.slot(Some(key), weight));
        if let Some(slot) = slot {
            queue.keys.add_holding(slot, 1);
            queue.took(slot);
        }
        drop(queue);
        Some(self.permit(rank, slot))
    }

    /// Where a call of `rank` and `key` would stand if it queued now: about
    /// how many waiters fair queueing serves before it (the higher ranks',
    /// and of its own rank its own key's waiters times the keys waiting
    /// there, at most all of them), with the permits out and the limit.
    pub(crate) fn queue_position(&self, rank: Criticality, key: Option<&Key>) -> QueuePosition {
        let inner = self.inner();
        let queue = lock(&inner.queue);
        let waiters = &queue.waiters;
        let higher: usize = Criticality::ALL
            .into_iter()
            .take_while(|&higher| higher > rank)
            .map(|higher| waiters.len_of(higher))
            .sum();
        let own = queue
            .keys
            .find(key)
            .map_or(0, |slot| waiters.flow_len(slot, rank));
        let flows = waiters.flows(rank).len().max(1);
        let same = waiters.len_of(rank).min(own.saturating_mul(flows));
        let handed: usize = Criticality::ALL.into_iter().map(|r| queue.handed[r]).sum();
        QueuePosition {
            ahead: higher + same,
            in_use: (queue.limit + queue.debt).saturating_sub(inner.available()),
            handed,
            limit: queue.limit,
        }
    }

    /// Waits for a permit as `ask` says.
    pub(crate) fn acquire_with(&self, ask: Ask) -> Acquire {
        Acquire::new(self.clone(), ask)
    }

    /// The lock-free take.
    #[inline]
    pub(super) fn take_fast(&self, rank: Criticality) -> Result<Permit, Miss> {
        self.inner().try_take(rank)?;
        Ok(self.permit(rank, None))
    }

    /// Permits of sheddable or critical calls picked up and not returned (0
    /// for default calls, which are not counted: their permits out are the
    /// rest).
    pub(crate) fn out(&self, rank: Criticality) -> usize {
        self.inner().out(rank)
    }

    /// Waiters of `rank` displaced from a full queue so far.
    pub(crate) fn displaced(&self, rank: Criticality) -> u64 {
        self.inner().displaced[rank].load(crate::sync::Ordering::Relaxed)
    }

    /// Keeps part of the limit for more critical calls (see [`Reserve`]);
    /// waiters that may take a permit under the new reserve get one at once.
    pub(crate) fn set_reserve(&self, reserve: Reserve) {
        let wakers = self
            .inner()
            .set_reserve_locked(&mut lock(&self.inner().queue), reserve);
        wakers.wake();
    }

    /// The reserve in force.
    pub(crate) fn reserve(&self) -> Reserve {
        lock(&self.inner().queue).reserve
    }

    /// Makes this a codel queue (see `queue/codel.rs`): a queue stands once
    /// no permit was idle for `interval`, and then gives new waiters
    /// `target`.
    pub(crate) fn set_codel(&self, target: Duration, interval: Duration) {
        lock(&self.inner().queue).codel = Some(Codel::new(target, interval));
    }

    /// Notes that a codel admission found a free permit: one was idle.
    #[inline]
    pub(crate) fn note_idle(&self) {
        self.inner().note_idle();
    }

    /// Codel's test for an arrival at `now` that found no free permit:
    /// whether the queue stands (then it is served newest first).
    pub(crate) fn standing(&self, now: Instant) -> bool {
        self.inner()
            .standing_locked(&mut lock(&self.inner().queue), now)
    }
}
