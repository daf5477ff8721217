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

mod waiters;

use crate::sync::{lock, Arc, AtomicUsize, Mutex, Ordering};
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use waiters::{Key, Standing, Waiters};

/// Bit set once the semaphore is closed.
const CLOSED: usize = 1;
/// Bit set while releases must take the lock: somebody waits, or the limit
/// was lowered below the number of permits out. Implies zero available.
const SLOW: usize = 2;
/// One available permit, counted in the bits above the flags.
const ONE: usize = 4;

/// A counting semaphore for async code that runs on any executor.
///
/// Clones share the same permits.
#[derive(Clone)]
pub struct Semaphore {
    inner: Arc<Inner>,
}

struct Inner {
    /// Available permits (`state / ONE`) plus the `CLOSED` and `SLOW` flags.
    state: AtomicUsize,
    queue: Mutex<Queue>,
}

struct Queue {
    waiters: Waiters,
    /// The configured number of permits.
    limit: usize,
    /// Permits still out that must be retired (not reused) when they come
    /// back, because the limit was lowered.
    debt: usize,
}

/// What [`Semaphore::snapshot`] read at one instant.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Snapshot {
    pub(crate) in_use: usize,
    pub(crate) waiters: usize,
    pub(crate) limit: usize,
}

/// A permit from a [`Semaphore`]; returned to it when dropped.
#[must_use = "a permit is returned as soon as it is dropped"]
pub struct Permit {
    inner: Arc<Inner>,
}

/// Why [`Semaphore::try_acquire`] failed (`#[non_exhaustive]`: a `match`
/// needs a `_` arm).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TryAcquireError {
    /// Every permit is in use (or promised to a waiter).
    NoPermits,
    /// The semaphore was closed.
    Closed,
}

/// Why an [`Acquire`] failed (`#[non_exhaustive]`: a `match` needs a `_` arm).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AcquireError {
    /// The queue already held the maximum number of waiters.
    QueueFull,
    /// The semaphore was closed.
    Closed,
}

impl fmt::Display for TryAcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NoPermits => "no permits available",
            Self::Closed => "semaphore closed",
        })
    }
}

impl fmt::Display for AcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::QueueFull => "semaphore queue is full",
            Self::Closed => "semaphore closed",
        })
    }
}

impl std::error::Error for TryAcquireError {}
impl std::error::Error for AcquireError {}

impl Semaphore {
    /// The largest number of permits a semaphore can hold; larger requests
    /// are clamped to it.
    pub const MAX_PERMITS: usize = usize::MAX / ONE;

    /// A semaphore with `permits` permits (at most [`MAX_PERMITS`](Self::MAX_PERMITS)).
    pub fn new(permits: usize) -> Self {
        let permits = permits.min(Self::MAX_PERMITS);
        Self {
            inner: Arc::new(Inner {
                state: AtomicUsize::new(permits * ONE),
                queue: Mutex::new(Queue {
                    waiters: Waiters::default(),
                    limit: permits,
                    debt: 0,
                }),
            }),
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
        Acquire {
            semaphore: self.clone(),
            max_waiters,
            key: None,
            done: false,
        }
    }

    /// Closes the semaphore: every waiter and every later acquire fails with
    /// `Closed`. Permits already out stay valid and still come back.
    pub fn close(&self) {
        self.inner.state.fetch_or(CLOSED, Ordering::AcqRel);
        let wakers = {
            let mut queue = lock(&self.inner.queue);
            let wakers = queue.waiters.close_all();
            self.inner.sync_slow_flag(&queue);
            wakers
        };
        wakers.into_iter().for_each(Waker::wake);
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.inner.state.load(Ordering::Acquire) & CLOSED != 0
    }

    /// Permits free right now.
    pub fn available_permits(&self) -> usize {
        self.inner.state.load(Ordering::Acquire) / ONE
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
        let queue = lock(&self.inner.queue);
        let available = self.available_permits();
        Snapshot {
            in_use: (queue.limit + queue.debt).saturating_sub(available),
            waiters: queue.waiters.len(),
            limit: queue.limit,
        }
    }

    /// Changes the number of permits at run time.
    ///
    /// Raising the limit wakes waiters at once. Lowering it takes free
    /// permits away first; permits still out are retired as they come back,
    /// so in-flight work is never interrupted.
    pub fn set_limit(&self, limit: usize) {
        let limit = limit.min(Self::MAX_PERMITS);
        let mut wakers = Vec::new();
        {
            let mut queue = lock(&self.inner.queue);
            if limit >= queue.limit {
                let added = limit - queue.limit;
                queue.limit = limit;
                self.inner
                    .release_many_locked(&mut queue, added, &mut wakers);
            } else {
                let removed = queue.limit - limit;
                queue.limit = limit;
                let taken = self.inner.take_available_locked(removed);
                queue.debt += removed - taken;
                self.inner.sync_slow_flag(&queue);
            }
        }
        wakers.into_iter().for_each(Waker::wake);
    }

    fn permit(&self) -> Permit {
        Permit {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl Inner {
    /// The lock-free fast path: one permit if one is available.
    #[inline]
    fn try_take(&self) -> Result<(), TryAcquireError> {
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
    fn release(&self) {
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
    fn release_slow(&self) {
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
    fn release_locked(&self, queue: &mut Queue) -> Option<Waker> {
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
    fn release_many_locked(&self, queue: &mut Queue, count: usize, wakers: &mut Vec<Waker>) {
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
    fn take_available_locked(&self, wanted: usize) -> usize {
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
    fn sync_slow_flag(&self, queue: &Queue) {
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
    fn enqueue_locked(
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

/// Future of [`Semaphore::acquire`] and [`Semaphore::acquire_bounded`].
///
/// Dropping it gives up the place in the queue; a permit that was already
/// handed to it passes on to the next waiter.
#[must_use = "futures do nothing unless polled"]
pub struct Acquire {
    semaphore: Semaphore,
    max_waiters: usize,
    key: Option<Key>,
    done: bool,
}

impl Acquire {
    /// Whether this future currently holds a place in the queue.
    pub fn is_queued(&self) -> bool {
        self.key.is_some()
    }
}

impl Future for Acquire {
    type Output = Result<Permit, AcquireError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if this.done {
            // Polled again after completion: answer consistently, never panic.
            return Poll::Ready(Err(AcquireError::Closed));
        }
        let inner = &this.semaphore.inner;
        let outcome = match this.key {
            None => match inner.try_take() {
                Ok(()) => Poll::Ready(Ok(())),
                Err(TryAcquireError::Closed) => Poll::Ready(Err(AcquireError::Closed)),
                Err(TryAcquireError::NoPermits) => {
                    let mut queue = lock(&inner.queue);
                    match inner.enqueue_locked(&mut queue, this.max_waiters, cx.waker()) {
                        Poll::Ready(Ok(Some(key))) => {
                            this.key = Some(key);
                            Poll::Pending
                        }
                        Poll::Ready(Ok(None)) => Poll::Ready(Ok(())),
                        Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
                        Poll::Pending => Poll::Pending,
                    }
                }
            },
            Some(key) => {
                let mut queue = lock(&inner.queue);
                match queue.waiters.standing_mut(key) {
                    Some(Standing::Waiting(waker)) => {
                        match waker {
                            Some(waker) if waker.will_wake(cx.waker()) => {}
                            _ => *waker = Some(cx.waker().clone()),
                        }
                        Poll::Pending
                    }
                    Some(Standing::Granted) => {
                        queue.waiters.free(key);
                        this.key = None;
                        Poll::Ready(Ok(()))
                    }
                    Some(Standing::Closed) | None => {
                        queue.waiters.free(key);
                        this.key = None;
                        Poll::Ready(Err(AcquireError::Closed))
                    }
                }
            }
        };
        match outcome {
            Poll::Ready(Ok(())) => {
                this.done = true;
                Poll::Ready(Ok(this.semaphore.permit()))
            }
            Poll::Ready(Err(error)) => {
                this.done = true;
                Poll::Ready(Err(error))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for Acquire {
    fn drop(&mut self) {
        let Some(key) = self.key.take() else {
            return;
        };
        let inner = &self.semaphore.inner;
        let waker = {
            let mut queue = lock(&inner.queue);
            let standing = queue.waiters.free(key);
            let waker = match standing {
                // A permit was handed to us but never picked up: pass it on.
                Some(Standing::Granted) => inner.release_locked(&mut queue),
                _ => None,
            };
            inner.sync_slow_flag(&queue);
            waker
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl fmt::Debug for Acquire {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Acquire")
            .field("queued", &self.is_queued())
            .finish_non_exhaustive()
    }
}
