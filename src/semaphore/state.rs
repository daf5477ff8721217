//! The semaphore's state: one atomic word (available permits and two flags)
//! for the lock-free fast paths, and the queue behind a mutex for the rest.
//! Every compare-and-swap lives here; this is the part the loom models
//! (tests/loom_semaphore.rs) check.

use super::waiters::{Key, Waiters};
use super::{AcquireError, Snapshot, TryAcquireError};
use crate::sync::{lock, AtomicUsize, Mutex, Ordering};
use core::task::{Poll, Waker};

/// Bit set once the semaphore is closed.
pub(super) const CLOSED: usize = 1;
/// Bit set while releases must take the lock: somebody waits, or the limit
/// was lowered below the number of permits out. Implies zero available.
pub(super) const SLOW: usize = 2;
/// One available permit, counted in the bits above the flags.
pub(super) const ONE: usize = 4;
pub(super) struct Inner {
    /// Available permits (`state / ONE`) plus the `CLOSED` and `SLOW` flags.
    pub(super) state: AtomicUsize,
    pub(super) queue: Mutex<Queue>,
}

pub(super) struct Queue {
    pub(super) waiters: Waiters,
    /// The configured number of permits.
    pub(super) limit: usize,
    /// Permits still out that must be retired (not reused) when they come
    /// back, because the limit was lowered.
    pub(super) debt: usize,
}

impl Inner {
    /// A state with `permits` available (at most `Semaphore::MAX_PERMITS`).
    pub(super) fn new(permits: usize) -> Self {
        Self {
            state: AtomicUsize::new(permits * ONE),
            queue: Mutex::new(Queue {
                waiters: Waiters::default(),
                limit: permits,
                debt: 0,
            }),
        }
    }

    /// Sets `CLOSED` and fails every waiter; returns their wakers (to wake
    /// outside the lock).
    pub(super) fn close(&self) -> Vec<Waker> {
        self.state.fetch_or(CLOSED, Ordering::AcqRel);
        let mut queue = lock(&self.queue);
        let wakers = queue.waiters.close_all();
        self.sync_slow_flag(&queue);
        wakers
    }

    /// Whether `CLOSED` is set.
    pub(super) fn is_closed(&self) -> bool {
        self.state.load(Ordering::Acquire) & CLOSED != 0
    }

    /// Permits free right now.
    pub(super) fn available(&self) -> usize {
        self.state.load(Ordering::Acquire) / ONE
    }

    /// In use, waiters and limit read under one lock (see
    /// `Semaphore::snapshot` for why the three are consistent).
    pub(super) fn snapshot(&self) -> Snapshot {
        let queue = lock(&self.queue);
        let available = self.available();
        Snapshot {
            in_use: (queue.limit + queue.debt).saturating_sub(available),
            waiters: queue.waiters.len(),
            limit: queue.limit,
        }
    }

    /// Changes the limit: raising it hands the new permits to waiters first
    /// (their wakers are returned, to wake outside the lock); lowering it
    /// takes free permits away and records the rest as debt, retired as
    /// permits come back.
    pub(super) fn set_limit(&self, limit: usize) -> Vec<Waker> {
        let mut wakers = Vec::new();
        let mut queue = lock(&self.queue);
        if limit >= queue.limit {
            let added = limit - queue.limit;
            queue.limit = limit;
            self.release_many_locked(&mut queue, added, &mut wakers);
        } else {
            let removed = queue.limit - limit;
            queue.limit = limit;
            let taken = self.take_available_locked(removed);
            queue.debt += removed - taken;
            self.sync_slow_flag(&queue);
        }
        wakers
    }

    /// The lock-free fast path: one permit if one is available.
    #[inline]
    pub(super) fn try_take(&self) -> Result<(), TryAcquireError> {
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            if state & CLOSED != 0 {
                return Err(TryAcquireError::Closed);
            }
            if state < ONE {
                return Err(TryAcquireError::NoPermits);
            }
            match self.state.compare_exchange_weak(
                state,
                state - ONE,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Ok(()),
                Err(actual) => state = actual,
            }
        }
    }

    /// Returns one permit: lock-free unless somebody waits or debt is due.
    #[inline]
    pub(super) fn release(&self) {
        let mut state = self.state.load(Ordering::Acquire);
        while state & SLOW == 0 {
            match self.state.compare_exchange_weak(
                state,
                state + ONE,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return,
                Err(actual) => state = actual,
            }
        }
        self.release_slow();
    }

    /// Returns one permit under the lock, waking the waiter it goes to.
    #[cold]
    #[inline(never)]
    pub(super) fn release_slow(&self) {
        let waker = {
            let mut queue = lock(&self.queue);
            self.release_locked(&mut queue)
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Returns one permit with the queue locked: pays debt first, then the
    /// longest waiter, then the pool. Returns the waker to call once unlocked.
    pub(super) fn release_locked(&self, queue: &mut Queue) -> Option<Waker> {
        if queue.debt > 0 {
            queue.debt -= 1;
            self.sync_slow_flag(queue);
            return None;
        }
        if let Some(waker) = queue.waiters.grant_front() {
            self.sync_slow_flag(queue);
            return waker;
        }
        // Nobody waits and no debt: the permit goes back to the pool, and
        // releases may take the fast path again.
        let _ = self
            .state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |state| {
                Some((state + ONE) & !SLOW)
            });
        None
    }

    /// Returns `count` permits at once (lock held): debt first, then waiters
    /// in queue order, the rest to the pool. Collects the wakers to call.
    pub(super) fn release_many_locked(
        &self,
        queue: &mut Queue,
        count: usize,
        wakers: &mut Vec<Waker>,
    ) {
        let paid = count.min(queue.debt);
        queue.debt -= paid;
        let mut left = count - paid;
        while left > 0 {
            match queue.waiters.grant_front() {
                Some(waker) => {
                    wakers.extend(waker);
                    left -= 1;
                }
                None => break,
            }
        }
        let slow = queue.waiters.len() > 0 || queue.debt > 0;
        let _ = self
            .state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |state| {
                let next = state + left * ONE;
                Some(if slow { next | SLOW } else { next & !SLOW })
            });
    }

    /// Takes up to `wanted` available permits out of the pool (lock held).
    ///
    /// If fewer than `wanted` are available, the caller records the rest as
    /// debt; the same CAS then sets `SLOW`, so every permit released from now
    /// on takes the lock and pays that debt. (Setting it later, as a separate
    /// step, let lock-free releases slip back into the pool in between: found
    /// by `tests/loom_semaphore.rs`, `set_limit_down_races_release`.)
    pub(super) fn take_available_locked(&self, wanted: usize) -> usize {
        let mut taken = 0;
        let _ = self
            .state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |state| {
                taken = (state / ONE).min(wanted);
                let next = state - taken * ONE;
                Some(if taken < wanted { next | SLOW } else { next })
            });
        taken
    }

    /// Makes the `SLOW` flag agree with the queue (lock held). Only ever sets
    /// it while no permit is available, preserving "SLOW implies zero".
    pub(super) fn sync_slow_flag(&self, queue: &Queue) {
        let slow = queue.waiters.len() > 0 || queue.debt > 0;
        let _ = self
            .state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |state| {
                let next = if slow { state | SLOW } else { state & !SLOW };
                (next != state).then_some(next)
            });
    }

    /// Queues a waiter unless a permit can be taken (lock held). Setting the
    /// `SLOW` flag races with lock-free releases through one CAS, so a permit
    /// released meanwhile is seen here instead of being missed.
    pub(super) fn enqueue_locked(
        &self,
        queue: &mut Queue,
        max_waiters: usize,
        waker: &Waker,
    ) -> Poll<Result<Option<Key>, AcquireError>> {
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            if state & CLOSED != 0 {
                return Poll::Ready(Err(AcquireError::Closed));
            }
            let (next, acquired) = if state >= ONE {
                (state - ONE, true)
            } else if queue.waiters.len() >= max_waiters {
                return Poll::Ready(Err(AcquireError::QueueFull));
            } else {
                (state | SLOW, false)
            };
            match self
                .state
                .compare_exchange(state, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) if acquired => return Poll::Ready(Ok(None)),
                Ok(_) => return Poll::Ready(Ok(Some(queue.waiters.push_back(waker.clone())))),
                Err(actual) => state = actual,
            }
        }
    }
}
