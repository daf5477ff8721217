//! [`Admit`]: the future of one admission.

use super::{Admission, AdmitError, Call, Queued};
use crate::semaphore::Permit;
use crate::time::{Clock, Instant};
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

/// The outcome of the synchronous first step of admission.
pub(crate) enum Decision<S> {
    Admitted(Permit),
    Rejected(AdmitError),
    Queued(Queued<S>),
}

/// Future of [`Admission::admit`] and [`Admission::admit_call`]: resolves to a [`Permit`] or an [`AdmitError`].
///
/// Dropping it while queued leaves the queue; nothing is left behind.
#[must_use = "futures do nothing unless polled"]
pub struct Admit<C: Clock> {
    step: Step<C>,
}

enum Step<C: Clock> {
    Start(Admission<C>, Call, Option<Instant>),
    Queued(Queued<C::Sleep>),
    Done,
}

impl<C: Clock> Admit<C> {
    pub(crate) fn new(admission: Admission<C>, call: Call, deadline: Option<Instant>) -> Self {
        Self {
            step: Step::Start(admission, call, deadline),
        }
    }

    /// Decides admission now, without waiting and without arming any timer:
    /// `Ready` with a permit or the refusal, or `Pending` when the request
    /// now holds its place in the queue (FIFO order and stats count it).
    ///
    /// A caller that decides admission synchronously and then hands the
    /// wait to a task uses this, so that the queue timeout and the deadline
    /// are armed by the first poll of the task that waits, with its waker
    /// (a timer belongs to whoever polls it). Polling after `Ready` answers
    /// [`AdmitError::Closed`], as for a finished future.
    pub fn enter(&mut self) -> Poll<Result<Permit, AdmitError>> {
        if let Poll::Ready(outcome) = self.start() {
            return Poll::Ready(outcome);
        }
        let Step::Queued(queued) = &mut self.step else {
            return Poll::Ready(Err(AdmitError::Closed));
        };
        let outcome =
            std::task::ready!(queued.poll_permit(&mut Context::from_waker(Waker::noop())));
        self.step = Step::Done;
        Poll::Ready(outcome)
    }

    /// Runs the synchronous decision if it has not run yet: `Ready` when it
    /// admitted or refused, `Pending` when the request is (or was) queued.
    fn start(&mut self) -> Poll<Result<Permit, AdmitError>> {
        if matches!(self.step, Step::Start(..)) {
            let Step::Start(admission, call, deadline) =
                core::mem::replace(&mut self.step, Step::Done)
            else {
                return Poll::Pending;
            };
            match admission.decide(call, deadline) {
                Decision::Admitted(permit) => {
                    self.step = Step::Done;
                    return Poll::Ready(Ok(permit));
                }
                Decision::Rejected(error) => {
                    self.step = Step::Done;
                    return Poll::Ready(Err(error));
                }
                Decision::Queued(queued) => self.step = Step::Queued(queued),
            }
        }
        Poll::Pending
    }
}

// `Admit` never pins its clock or anything inside `Step` structurally: the
// only self-referential part, the sleep, is boxed.
impl<C: Clock> Unpin for Admit<C> {}

impl<C: Clock> Future for Admit<C> {
    type Output = Result<Permit, AdmitError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if let Poll::Ready(outcome) = this.start() {
            return Poll::Ready(outcome);
        }
        match &mut this.step {
            Step::Queued(queued) => {
                let outcome = std::task::ready!(queued.poll_admit(cx));
                this.step = Step::Done;
                Poll::Ready(outcome)
            }
            // Polled after completion: a consistent answer, never a panic.
            Step::Start(..) | Step::Done => Poll::Ready(Err(AdmitError::Closed)),
        }
    }
}

impl<C: Clock> fmt::Debug for Admit<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let step = match self.step {
            Step::Start(..) => "start",
            Step::Queued(_) => "queued",
            Step::Done => "done",
        };
        f.debug_struct("Admit").field("step", &step).finish()
    }
}
