//! An async semaphore that needs no runtime: FIFO-fair, cancellation-safe,
//! closable and resizable.
//!
//! [`Semaphore`] hands out owned [`Permit`]s; dropping a permit returns it.
//! When none is free, [`Semaphore::acquire`] queues the caller and the next
//! returned permit is handed directly to the longest waiter, so a newcomer
//! can never overtake the queue.
//!
//! The semaphore also carries what an [`Admission`](crate::admission::Admission)
//! builds on: a [`Reserve`](crate::admission::Reserve) that keeps part of the limit for more critical
//! calls, a queue that serves the most critical waiters first (FIFO within a
//! criticality, or newest first while a codel queue stands), displacement of
//! the newest least critical waiter from a full queue, and a fair share of
//! the limit between keys. A plain `Semaphore` uses none of it.
//!
//! Cancellation is safe at every point: dropping an [`Acquire`] leaves the
//! queue, and if a permit had already been handed to it, that permit moves on
//! to the next waiter (or back to the pool) instead of being lost.
//!
//! The uncontended paths (`try_acquire`, releasing with nobody waiting) are a
//! single atomic compare-and-swap; the queue sits behind a mutex that only the
//! contended paths take. The queue's memory follows its live waiters: after a
//! burst of 100,000 waiters drains, it is back to a few dozen entries. The type is `Send + Sync`, so it also works on
//! multi-threaded executors.
//!
//! ```
//! use edgeshed::semaphore::Semaphore;
//! # futures::executor::block_on(async {
//! let semaphore = Semaphore::new(1);
//! let first = semaphore.acquire().await.unwrap();
//! assert!(semaphore.try_acquire().is_err()); // none left
//! drop(first);                                // returned on drop
//! assert_eq!(semaphore.available_permits(), 1);
//! # });
//! ```

mod acquire;
mod buffers;
mod error;
mod keys;
mod lending;
mod locked;
mod permit;
mod queue;
mod ranked;
mod resize;
mod state;
mod waiters;
mod wakers;

pub use acquire::Acquire;
pub use error::{AcquireError, TryAcquireError};
pub use permit::Permit;

use permit::Handle;

pub(crate) use locked::Ask;

use crate::criticality::Criticality;
use crate::per_criticality::PerCriticality;
use crate::sync::{lock, Arc};
use core::fmt;
use keys::KeySlot;
use state::{Inner, ONE};

/// A counting semaphore for async code that runs on any executor.
///
/// Clones share the same permits.
#[derive(Clone)]
pub struct Semaphore {
    shared: Arc<Shared>,
}

/// The state, and one handle per criticality for the permits without a key
/// (see [`Permit`]: a permit is one pointer, as a plain semaphore's is).
/// Behind one `Arc`, so that cloning a semaphore costs one count.
struct Shared {
    inner: Arc<Inner>,
    handles: PerCriticality<Arc<Handle>>,
}

/// What [`Semaphore::snapshot`] read at one instant.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Snapshot {
    pub(crate) in_use: usize,
    pub(crate) waiters: usize,
    pub(crate) limit: usize,
    /// Waiters per criticality.
    pub(crate) queued: PerCriticality<usize>,
    /// Permits handed to waiters not picked up yet, per criticality.
    pub(crate) handed: PerCriticality<usize>,
    /// Per criticality, whether the reserve it must leave is lent to it now.
    pub(crate) lent: PerCriticality<bool>,
}

impl Semaphore {
    /// The largest number of permits a semaphore can hold; larger requests
    /// are clamped to it.
    pub const MAX_PERMITS: usize = usize::MAX / ONE;

    /// A semaphore with `permits` permits (at most [`MAX_PERMITS`](Self::MAX_PERMITS)).
    pub fn new(permits: usize) -> Self {
        let inner = Arc::new(Inner::new(permits.min(Self::MAX_PERMITS)));
        let handles =
            PerCriticality::from_fn(|rank| Arc::new(Handle::new(Arc::clone(&inner), rank, None)));
        Self {
            shared: Arc::new(Shared { inner, handles }),
        }
    }

    /// Takes a permit if one is free right now and nobody is queued for it.
    #[inline]
    pub fn try_acquire(&self) -> Result<Permit, TryAcquireError> {
        self.try_acquire_as(Criticality::Default)
    }

    /// Waits for a permit, queueing behind earlier waiters (FIFO).
    ///
    /// The queue is unbounded; see [`acquire_bounded`](Self::acquire_bounded).
    pub fn acquire(&self) -> Acquire {
        self.acquire_bounded(usize::MAX)
    }

    /// Waits for a permit, unless `max_waiters` callers already wait: then
    /// the future completes with [`AcquireError::QueueFull`]. With
    /// `max_waiters == 0` it never waits.
    pub fn acquire_bounded(&self, max_waiters: usize) -> Acquire {
        Acquire::new(
            self.clone(),
            Ask {
                rank: Criticality::Default,
                key: None,
                weight: 1,
                max_waiters,
                at: None,
            },
        )
    }

    /// Closes the semaphore: every waiter and every later acquire fails with
    /// `Closed`. Permits already out stay valid and still come back.
    pub fn close(&self) {
        let wakers = self.inner().close_locked(&mut lock(&self.inner().queue));
        // Woken outside the lock.
        wakers.wake();
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.inner().is_closed()
    }

    /// Permits free right now.
    pub fn available_permits(&self) -> usize {
        self.inner().available()
    }

    /// Callers queued for a permit right now.
    pub fn waiters(&self) -> usize {
        lock(&self.inner().queue).waiters.len()
    }

    /// How many queue entries the waiter queue's storage has room for right
    /// now (and the fair-share table's). Test support for the memory contract
    /// (the storage shrinks back to the live waiters after a burst); not a
    /// stable API.
    #[doc(hidden)]
    pub fn queue_capacity(&self) -> usize {
        let queue = lock(&self.inner().queue);
        queue.waiters.capacity() + queue.keys.capacity()
    }

    /// Keys (of keyed calls) counted for fair queueing right now: keys with
    /// permits held or calls waiting. Test support for the memory contract;
    /// not a stable API.
    #[doc(hidden)]
    pub fn active_keys(&self) -> usize {
        lock(&self.inner().queue).keys.keyed()
    }

    /// The configured number of permits.
    pub fn limit(&self) -> usize {
        lock(&self.inner().queue).limit
    }

    /// Permits currently held (including those handed to a waiter that has
    /// not picked them up yet). May exceed [`limit`](Self::limit) for a while
    /// after the limit was lowered.
    pub fn in_use(&self) -> usize {
        self.snapshot().in_use
    }

    /// [`in_use`](Self::in_use), [`waiters`](Self::waiters) and
    /// [`limit`](Self::limit) as they all stood at one instant.
    ///
    /// The limit, the debt and the queue change only under the lock, which
    /// is held throughout; the available count changes without it only
    /// through lock-free takes and releases, and it is read once. So all
    /// values held together at the moment of that read: waiters of a
    /// criticality imply no more free permits than it must leave free (none
    /// without a reserve: `waiters > 0` implies `in_use >= limit`), and
    /// `in_use` exceeds `limit` only by permits still out after the limit
    /// was lowered.
    pub(crate) fn snapshot(&self) -> Snapshot {
        let queue = lock(&self.inner().queue);
        let available = self.inner().available();
        let in_use = (queue.limit + queue.debt).saturating_sub(available);
        Snapshot {
            in_use,
            waiters: queue.waiters.len(),
            limit: queue.limit,
            queued: PerCriticality::from_fn(|rank| queue.waiters.len_of(rank)),
            handed: queue.handed,
            lent: PerCriticality::from_fn(|rank| self.inner().lent_now(&queue, rank, in_use)),
        }
    }

    /// Changes the number of permits at run time.
    ///
    /// Raising the limit wakes waiters at once. Lowering it takes free
    /// permits away first; permits still out are retired as they come back,
    /// so in-flight work is never interrupted. A [`Reserve`](crate::admission::Reserve) follows the new
    /// limit at once.
    pub fn set_limit(&self, limit: usize) {
        let limit = limit.min(Self::MAX_PERMITS);
        let wakers = self
            .inner()
            .set_limit_locked(&mut lock(&self.inner().queue), limit);
        // Woken outside the lock.
        wakers.wake();
    }

    /// The state behind the lock and the atomic word.
    #[inline(always)]
    fn inner(&self) -> &Arc<Inner> {
        &self.shared.inner
    }

    pub(crate) fn permit(&self, rank: Criticality, key: Option<KeySlot>) -> Permit {
        self.inner().count_taken(rank);
        let handle = match key {
            None | Some(KeySlot::KEYLESS) => Arc::clone(&self.shared.handles[rank]),
            // Keyed permits (on the locked path anyway) get a handle of their own.
            Some(_) => Arc::new(Handle::new(Arc::clone(self.inner()), rank, key)),
        };
        Permit::new(handle)
    }
}

impl fmt::Debug for Semaphore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Semaphore")
            .field("available", &self.available_permits())
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}
