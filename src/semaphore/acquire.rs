//! [`Acquire`]: the future of a queued acquisition, and its `Drop`, which
//! gives the place (or a permit already handed over) back.

use super::locked::{Ask, Entered};
use super::state::Miss;
use super::waiters::{Place, Standing};
use super::wakers::Wakers;
use super::{AcquireError, Permit, Semaphore};
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
    ask: Ask,
    place: Option<Place>,
    done: bool,
}

impl Acquire {
    /// Not queued yet: the first poll takes a permit or a place.
    pub(crate) fn new(semaphore: Semaphore, ask: Ask) -> Self {
        Self {
            semaphore,
            ask,
            place: None,
            done: false,
        }
    }

    /// The key it asks for, if any.
    pub(crate) fn key(&self) -> Option<&crate::Key> {
        self.ask.key.as_ref()
    }

    /// Whether this future currently holds a place in the queue.
    pub fn is_queued(&self) -> bool {
        self.place.is_some()
    }

    /// The first poll: a permit at once, a place in the queue, or a refusal.
    fn enter(&mut self, cx: &mut Context<'_>) -> Poll<Result<Permit, AcquireError>> {
        let semaphore = &self.semaphore;
        if self.ask.key.is_none() {
            match semaphore.take_fast(self.ask.rank) {
                Ok(permit) => return Poll::Ready(Ok(permit)),
                Err(Miss::Closed) => return Poll::Ready(Err(AcquireError::Closed)),
                Err(Miss::NoPermits | Miss::Locked) => {}
            }
        }
        let inner = semaphore.inner();
        let entered = {
            let mut queue = lock(&inner.queue);
            inner.enqueue_locked(&mut queue, &self.ask, cx.waker())
        };
        match entered {
            Ok(Entered::Taken(key, woken)) => {
                woken.wake();
                Poll::Ready(Ok(semaphore.permit(self.ask.rank, key)))
            }
            Ok(Entered::Queued(place, woken)) => {
                self.place = Some(place);
                woken.wake();
                Poll::Pending
            }
            Err(error) => Poll::Ready(Err(error)),
        }
    }

    /// A later poll: still waiting, or the outcome someone else decided.
    fn wait(&mut self, place: Place, cx: &mut Context<'_>) -> Poll<Result<Permit, AcquireError>> {
        let inner = self.semaphore.inner();
        let mut queue = lock(&inner.queue);
        let error = match queue.waiters.standing_mut(place) {
            Some(Standing::Waiting(waker)) => {
                match waker {
                    Some(waker) if waker.will_wake(cx.waker()) => {}
                    _ => *waker = Some(cx.waker().clone()),
                }
                return Poll::Pending;
            }
            Some(Standing::Granted) => None,
            Some(Standing::Displaced) => Some(AcquireError::Displaced),
            Some(Standing::Unfair) => Some(AcquireError::FairShare),
            Some(Standing::Stale) => Some(AcquireError::Stale),
            Some(Standing::Closed) | None => Some(AcquireError::Closed),
        };
        let freed = queue.waiters.free(place).map(|(_, tag)| tag);
        if let (None, Some(tag)) = (error, freed) {
            queue.unhand(tag.rank);
        }
        drop(queue);
        self.place = None;
        match (error, freed) {
            (None, Some(tag)) => Poll::Ready(Ok(self.semaphore.permit(tag.rank, Some(tag.key)))),
            (Some(error), _) => Poll::Ready(Err(error)),
            (None, None) => Poll::Ready(Err(AcquireError::Closed)),
        }
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
        let outcome = match this.place {
            None => this.enter(cx),
            Some(place) => this.wait(place, cx),
        };
        if outcome.is_ready() {
            this.done = true;
        }
        outcome
    }
}

impl Drop for Acquire {
    fn drop(&mut self) {
        let Some(place) = self.place.take() else {
            return;
        };
        let inner = self.semaphore.inner();
        let waker = {
            let mut queue = lock(&inner.queue);
            let wakers = match queue.waiters.free(place) {
                // A permit was handed to us but never picked up: pass it on.
                Some((Standing::Granted, tag)) => {
                    queue.unhand(tag.rank);
                    inner.release_keyed_locked(&mut queue, tag.key)
                }
                Some((Standing::Waiting(_), tag)) => {
                    queue.left(tag.key);
                    Wakers::default()
                }
                _ => Wakers::default(),
            };
            inner.sync_slow_flag(&queue);
            wakers
        };
        waker.wake();
    }
}

impl fmt::Debug for Acquire {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Acquire")
            .field("queued", &self.is_queued())
            .field("criticality", &self.ask.rank)
            .finish_non_exhaustive()
    }
}
