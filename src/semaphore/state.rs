//! The semaphore's state: one atomic word (available permits and three
//! flags) for the lock-free fast paths, and the queue behind a mutex for the
//! rest (`locked.rs`). Every compare-and-swap on the word lives here; this is
//! the part the loom models (tests/loom_semaphore.rs) check.
//!
//! The invariant that lets the fast paths skip the lock: **outside the lock,
//! no waiter could take a free permit** — the most critical waiting rank
//! finds no more free permits than it must leave free (its *keep*, zero
//! without a [`Reserve`](crate::admission::Reserve)). So a lock-free acquire
//! of rank `r` that finds more than `keep(r)` permits free overtakes only
//! less critical waiters, which is what their ranks mean.

use super::queue::Queue;
use super::TryAcquireError;
use crate::criticality::Criticality;
use crate::per_criticality::PerCriticality;
use crate::sync::{lock, AtomicU64, AtomicUsize, Mutex, Ordering};

/// Bit set once the semaphore is closed.
pub(super) const CLOSED: usize = 1;
/// Bit set while releases must take the lock: somebody waits, or the limit
/// was lowered below the number of permits out.
pub(super) const SLOW: usize = 2;
/// Bit set while the lock holder changes the limit or the reserve: the
/// per-rank keeps are being rewritten, so ranked fast paths take the lock.
pub(super) const RESIZE: usize = 4;
/// One available permit, counted in the bits above the flags.
pub(super) const ONE: usize = 8;

pub(super) struct Inner {
    /// Available permits (`state / ONE`) plus the flags.
    pub(super) state: AtomicUsize,
    pub(super) queue: Mutex<Queue>,
    /// The keeps of the sheddable and default ranks, mirrored from the queue
    /// for the fast paths (written under the lock, with `RESIZE` set).
    keeps: [AtomicUsize; 2],
    /// Permits of sheddable and of critical calls out (picked up, not yet
    /// returned); the default rank's are the rest, so the plain path pays
    /// nothing for them. With the queue's count of those handed over but not
    /// picked up, they give each rank's permits out.
    out: PerCriticality<AtomicUsize>,
    /// Waiters displaced from a full queue, per rank.
    pub(super) displaced: PerCriticality<AtomicU64>,
    /// Set (to 1) when a codel admission took a free permit on the fast
    /// path: a permit was idle (`queue/codel.rs`).
    idle: AtomicUsize,
    /// Set (to 1) when a default or critical call took a permit since a
    /// locked arrival last looked: a sight of that rank, which ends the
    /// loans of the ranks below it (`lending.rs`), noted without the lock.
    pub(super) sighted: PerCriticality<AtomicUsize>,
}

/// Why a lock-free take failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Miss {
    Closed,
    NoPermits,
    /// The keeps are being rewritten: decide under the lock.
    Locked,
}

impl From<Miss> for TryAcquireError {
    fn from(miss: Miss) -> Self {
        match miss {
            Miss::Closed => Self::Closed,
            Miss::NoPermits | Miss::Locked => Self::NoPermits,
        }
    }
}

impl Inner {
    /// A state with `permits` available (at most `Semaphore::MAX_PERMITS`).
    pub(super) fn new(permits: usize) -> Self {
        Self {
            state: AtomicUsize::new(permits * ONE),
            queue: Mutex::new(Queue::new(permits)),
            keeps: [AtomicUsize::new(0), AtomicUsize::new(0)],
            out: PerCriticality::default(),
            displaced: PerCriticality::default(),
            idle: AtomicUsize::new(0),
            sighted: PerCriticality::default(),
        }
    }

    /// Whether `CLOSED` is set.
    pub(super) fn is_closed(&self) -> bool {
        self.state.load(Ordering::Acquire) & CLOSED != 0
    }

    /// Permits free right now.
    pub(super) fn available(&self) -> usize {
        self.state.load(Ordering::Acquire) / ONE
    }

    /// The lock-free fast path: one permit if more than `rank`'s keep are
    /// free. The keep is read after the state and written (under the lock)
    /// only while `RESIZE` is set, which a take sees and leaves to the lock.
    /// So a take whose compare-and-swap succeeds used the keep that held when
    /// it read the state: if a resize ran in between and left the word as it
    /// was, the resize granted nothing (a grant changes the word), so the
    /// take is as if it came first.
    #[inline]
    pub(super) fn try_take(&self, rank: Criticality) -> Result<(), Miss> {
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            if state & (CLOSED | RESIZE) != 0 {
                return Err(if state & CLOSED != 0 {
                    Miss::Closed
                } else {
                    Miss::Locked
                });
            }
            let [sheddable, default] = &self.keeps;
            let keep = match rank {
                Criticality::Critical => 0,
                Criticality::Default => default.load(Ordering::Acquire),
                Criticality::Sheddable => sheddable.load(Ordering::Acquire),
            };
            if state / ONE <= keep {
                return Err(Miss::NoPermits);
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

    /// One permit if more than `keep` are free (lock held, so `keep` is exact).
    pub(super) fn take_above(&self, keep: usize) -> Result<(), Miss> {
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            if state & CLOSED != 0 {
                return Err(Miss::Closed);
            }
            if state / ONE <= keep {
                return Err(Miss::NoPermits);
            }
            match self.state.compare_exchange(
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
                Ok(_) => {
                    // Back in the pool: a permit went idle (codel's busy
                    // spell ends; read at the next arrival that must wait).
                    // A plain store, no read-modify-write.
                    self.note_idle();
                    return;
                }
                Err(actual) => state = actual,
            }
        }
        self.release_slow();
    }

    /// Returns one permit under the lock, waking the waiter it goes to.
    #[cold]
    #[inline(never)]
    fn release_slow(&self) {
        let wakers = {
            let mut queue = lock(&self.queue);
            self.release_locked(&mut queue)
        };
        wakers.wake();
    }

    /// Adds `count` permits to the pool (lock held), setting `SLOW` to what
    /// the queue needs.
    pub(super) fn add_to_pool(&self, queue: &Queue, count: usize) {
        let slow = queue.needs_slow();
        let _ = self
            .state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |state| {
                let next = state + count * ONE;
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

    /// Makes the `SLOW` flag agree with the queue (lock held).
    pub(super) fn sync_slow_flag(&self, queue: &Queue) {
        let slow = queue.needs_slow();
        let _ = self
            .state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |state| {
                let next = if slow { state | SLOW } else { state & !SLOW };
                (next != state).then_some(next)
            });
    }

    /// Sets (`true`) or clears the `RESIZE` flag (lock held).
    pub(super) fn resizing(&self, on: bool) {
        if on {
            self.state.fetch_or(RESIZE, Ordering::AcqRel);
        } else {
            self.state.fetch_and(!RESIZE, Ordering::AcqRel);
        }
    }

    /// Whether a reserve keeps permits for some rank (read lock-free).
    #[inline]
    pub(super) fn has_reserve(&self) -> bool {
        self.keeps
            .iter()
            .any(|keep| keep.load(Ordering::Relaxed) > 0)
    }

    /// Mirrors the queue's keeps for the fast paths (lock held, `RESIZE` set).
    pub(super) fn publish_keeps(&self, queue: &Queue) {
        for (mirror, rank) in self
            .keeps
            .iter()
            .zip([Criticality::Sheddable, Criticality::Default])
        {
            mirror.store(queue.keep(rank), Ordering::Release);
        }
    }

    /// One more permit of `rank` out (not counted for default ones), and a
    /// sight of `rank` unless it is the lowest.
    #[inline]
    pub(super) fn count_taken(&self, rank: Criticality) {
        if rank != Criticality::Default {
            self.out[rank].fetch_add(1, Ordering::Relaxed);
        }
        // A load first: where nothing clears the flag a take only reads it.
        let sighted = &self.sighted[rank];
        if rank != Criticality::Sheddable && sighted.load(Ordering::Relaxed) == 0 {
            sighted.store(1, Ordering::Relaxed);
        }
    }

    /// One permit of `rank` back (not counted for default ones).
    #[inline]
    pub(super) fn count_returned(&self, rank: Criticality) {
        if rank != Criticality::Default {
            self.out[rank].fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Permits of `rank` picked up and not returned (0 for the default
    /// rank: not counted).
    pub(super) fn out(&self, rank: Criticality) -> usize {
        self.out[rank].load(Ordering::Relaxed)
    }

    /// Notes that a permit was idle (a codel admission found one free, or a
    /// release returned one to the pool).
    #[inline]
    pub(super) fn note_idle(&self) {
        self.idle.store(1, Ordering::Relaxed);
    }

    /// Whether a permit was noted idle since the last call; clears the note.
    pub(super) fn take_idle_note(&self) -> bool {
        self.idle.swap(0, Ordering::Relaxed) != 0
    }
}
