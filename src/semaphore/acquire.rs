//! [`Acquire`]: the future of a queued acquisition, and its `Drop`, which
//! gives the place (or a permit already handed over) back.

use super::waiters::{Key, Standing};
use super::{AcquireError, Permit, Semaphore, TryAcquireError};
use crate::sync::lock;
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

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
    /// Not queued yet: the first poll takes a permit or a place.
    pub(super) fn new(semaphore: Semaphore, max_waiters: usize) -> Self {
        Self {
            semaphore,
            max_waiters,
            key: None,
            done: false,
        }
    }

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
