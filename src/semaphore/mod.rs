//! An async semaphore that needs no runtime: FIFO-fair, cancellation-safe,
//! closable and resizable.
//!
//! [`Semaphore`] hands out owned [`Permit`]s; dropping a permit returns it.
//! When none is free, [`Semaphore::acquire`] queues the caller and the next
//! returned permit is handed directly to the longest waiter, so a newcomer
//! can never overtake the queue.
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
mod error;
mod state;
mod waiters;

pub use acquire::Acquire;
pub use error::{AcquireError, TryAcquireError};

use crate::sync::{lock, Arc};
use core::fmt;
use core::task::Waker;
use state::{Inner, ONE};

/// A counting semaphore for async code that runs on any executor.
///
/// Clones share the same permits.
#[derive(Clone)]
pub struct Semaphore {
    inner: Arc<Inner>,
}

/// A permit from a [`Semaphore`]; returned to it when dropped.
#[must_use = "a permit is returned as soon as it is dropped"]
pub struct Permit {
    inner: Arc<Inner>,
}

/// What [`Semaphore::snapshot`] read at one instant.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Snapshot {
    pub(crate) in_use: usize,
    pub(crate) waiters: usize,
    pub(crate) limit: usize,
}

impl Semaphore {
    /// The largest number of permits a semaphore can hold; larger requests
    /// are clamped to it.
    pub const MAX_PERMITS: usize = usize::MAX / ONE;

    /// A semaphore with `permits` permits (at most [`MAX_PERMITS`](Self::MAX_PERMITS)).
    pub fn new(permits: usize) -> Self {
        Self {
            inner: Arc::new(Inner::new(permits.min(Self::MAX_PERMITS))),
        }
    }

    /// Takes a permit if one is free right now and nobody is queued for it.
    #[inline]
    pub fn try_acquire(&self) -> Result<Permit, TryAcquireError> {
        self.inner.try_take()?;
        Ok(self.permit())
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
        Acquire::new(self.clone(), max_waiters)
    }

    /// Closes the semaphore: every waiter and every later acquire fails with
    /// `Closed`. Permits already out stay valid and still come back.
    pub fn close(&self) {
        // Woken outside the lock.
        self.inner.close().into_iter().for_each(Waker::wake);
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// Permits free right now.
    pub fn available_permits(&self) -> usize {
        self.inner.available()
    }

    /// Callers queued for a permit right now.
    pub fn waiters(&self) -> usize {
        lock(&self.inner.queue).waiters.len()
    }

    /// How many queue entries the waiter queue's storage has room for right
    /// now. Test support for the memory contract (the storage shrinks back to
    /// the live waiters after a burst); not a stable API.
    #[doc(hidden)]
    pub fn queue_capacity(&self) -> usize {
        lock(&self.inner.queue).waiters.capacity()
    }

    /// The configured number of permits.
    pub fn limit(&self) -> usize {
        lock(&self.inner.queue).limit
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
    /// is held throughout; the available count can change without it only
    /// while nobody waits and no debt is due (the `SLOW` flag is clear), and
    /// it is read once. So all three values held together at the moment of
    /// that read: `waiters > 0` implies `in_use >= limit`, and `in_use`
    /// exceeds `limit` only by permits still out after the limit was lowered.
    pub(crate) fn snapshot(&self) -> Snapshot {
        self.inner.snapshot()
    }

    /// Changes the number of permits at run time.
    ///
    /// Raising the limit wakes waiters at once. Lowering it takes free
    /// permits away first; permits still out are retired as they come back,
    /// so in-flight work is never interrupted.
    pub fn set_limit(&self, limit: usize) {
        let limit = limit.min(Self::MAX_PERMITS);
        // Woken outside the lock.
        self.inner
            .set_limit(limit)
            .into_iter()
            .for_each(Waker::wake);
    }

    fn permit(&self) -> Permit {
        Permit {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl Drop for Permit {
    #[inline]
    fn drop(&mut self) {
        self.inner.release();
    }
}

impl fmt::Debug for Permit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permit").finish_non_exhaustive()
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
