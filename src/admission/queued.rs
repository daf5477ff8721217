//! [`Queued`]: a request waiting in the admission queue, with its timer.

use super::{AdmitError, Criticality, Shared};
use crate::error::{OverloadCause, Overloaded, RateLimited};
use crate::semaphore::{Acquire, AcquireError, Ask, Permit};
use crate::sync::{Arc, Ordering};
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

/// A request waiting in the admission queue, with its timer armed.
///
/// Dropping it leaves the queue (a permit already handed to it moves on).
pub(crate) struct Queued<S> {
    shared: Arc<Shared>,
    rank: Criticality,
    acquire: Option<Acquire>,
    /// The queue timeout or the deadline, whichever comes first; `true` when
    /// it is the deadline.
    timer: Option<(Pin<Box<S>>, bool)>,
}

impl<S: Future<Output = ()>> Queued<S> {
    pub(crate) fn new(shared: Arc<Shared>, ask: Ask, timer: Option<(S, bool)>) -> Self {
        let rank = ask.rank;
        let acquire = Some(shared.semaphore.acquire_with(ask));
        Self {
            shared,
            rank,
            acquire,
            timer: timer.map(|(sleep, is_deadline)| (Box::pin(sleep), is_deadline)),
        }
    }

    /// Polls for the permit; the timer is polled (and so armed) on every
    /// pending poll, so a queued wait never outlives its bound.
    pub(crate) fn poll_admit(&mut self, cx: &mut Context<'_>) -> Poll<Result<Permit, AdmitError>> {
        if let Poll::Ready(outcome) = self.poll_permit(cx) {
            return Poll::Ready(outcome);
        }
        self.poll_timer(cx)
    }

    /// Polls for the permit only: the timer is left alone.
    pub(crate) fn poll_permit(&mut self, cx: &mut Context<'_>) -> Poll<Result<Permit, AdmitError>> {
        let counters = &self.shared.counters;
        let Some(acquire) = self.acquire.as_mut() else {
            return Poll::Ready(Err(AdmitError::Closed));
        };
        let Poll::Ready(outcome) = Pin::new(&mut *acquire).poll(cx) else {
            return Poll::Pending;
        };
        if outcome.is_err() {
            self.shared.refused(acquire.key());
        }
        Poll::Ready(match outcome {
            Ok(permit) => {
                counters.admitted.add(self.rank);
                Ok(permit)
            }
            Err(AcquireError::QueueFull) => {
                counters.shed.add(self.rank);
                Err(AdmitError::Overloaded(Overloaded::new()))
            }
            // Counted by the semaphore when it happened.
            Err(AcquireError::Displaced) => Err(AdmitError::Overloaded(Overloaded::because(
                OverloadCause::Displaced,
            ))),
            Err(AcquireError::Stale) => {
                counters.queue_timeouts.add(self.rank);
                Err(AdmitError::Overloaded(Overloaded::queue_timeout()))
            }
            Err(AcquireError::FairShare) => {
                counters.fair_share_refused.fetch_add(1, Ordering::Relaxed);
                Err(AdmitError::RateLimited(RateLimited::fair_share()))
            }
            Err(_) => Err(AdmitError::Closed),
        })
    }

    /// Polls the timer (arming it on the first poll): `Ready` with the
    /// error once it has fired, and the queue place is given up.
    fn poll_timer(&mut self, cx: &mut Context<'_>) -> Poll<Result<Permit, AdmitError>> {
        let counters = &self.shared.counters;
        let Some((sleep, is_deadline)) = self.timer.as_mut() else {
            return Poll::Pending;
        };
        if sleep.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        // Time is up: leave the queue now, not whenever we are dropped.
        let is_deadline = *is_deadline;
        self.timer = None;
        if let Some(acquire) = self.acquire.take() {
            if !is_deadline {
                self.shared.refused(acquire.key());
            }
        }
        Poll::Ready(Err(if is_deadline {
            counters.expired.fetch_add(1, Ordering::Relaxed);
            AdmitError::Expired
        } else {
            counters.queue_timeouts.add(self.rank);
            AdmitError::Overloaded(Overloaded::queue_timeout())
        }))
    }
}
