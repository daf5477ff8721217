use super::{Admission, Shared};
use crate::error::{BoxError, Closed, Expired, Overloaded};
use crate::semaphore::{Acquire, AcquireError, Permit};
use crate::sync::{Arc, Ordering};
use crate::time::{Clock, Instant};
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

/// Why admission was refused.
///
/// `#[non_exhaustive]`: a `match` needs a `_` arm. [`overloaded`](Self::overloaded),
/// [`is_expired`](Self::is_expired), [`is_closed`](Self::is_closed) and
/// [`into_box_error`](Self::into_box_error) answer without one.
///
/// ```compile_fail
/// use edgeshed::admission::AdmitError;
/// // error: non-exhaustive patterns: `_` not covered
/// fn status(error: AdmitError) -> u16 {
///     match error {
///         AdmitError::Overloaded(_) | AdmitError::Closed => 503,
///         AdmitError::Expired => 504,
///     }
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AdmitError {
    /// At capacity: shed at once or timed out in the queue (HTTP 503).
    Overloaded(Overloaded),
    /// The request's deadline passed before it was admitted (HTTP 504).
    Expired,
    /// The limiter was closed.
    Closed,
}

impl AdmitError {
    /// The `Overloaded` error, if that is why admission was refused.
    pub fn overloaded(&self) -> Option<Overloaded> {
        match self {
            Self::Overloaded(overloaded) => Some(*overloaded),
            _ => None,
        }
    }

    /// Whether the request's deadline passed before it was admitted (HTTP 504).
    pub fn is_expired(&self) -> bool {
        matches!(self, Self::Expired)
    }

    /// Whether the limiter was closed.
    pub fn is_closed(&self) -> bool {
        matches!(self, Self::Closed)
    }

    /// The same error as a [`BoxError`] holding the specific error type
    /// ([`Overloaded`], [`Expired`] or [`Closed`]), so that
    /// `error.is::<Overloaded>()` works on it.
    pub fn into_box_error(self) -> BoxError {
        match self {
            Self::Overloaded(overloaded) => overloaded.into(),
            Self::Expired => Expired::new().into(),
            Self::Closed => Closed::new().into(),
        }
    }
}

impl fmt::Display for AdmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Overloaded(overloaded) => overloaded.fmt(f),
            Self::Expired => Expired::new().fmt(f),
            Self::Closed => Closed::new().fmt(f),
        }
    }
}

impl std::error::Error for AdmitError {}

/// The outcome of the synchronous first step of admission.
pub(crate) enum Decision<S> {
    Admitted(Permit),
    Rejected(AdmitError),
    Queued(Queued<S>),
}

/// A request waiting in the admission queue, with its timer armed.
///
/// Dropping it leaves the queue (a permit already handed to it moves on).
pub(crate) struct Queued<S> {
    shared: Arc<Shared>,
    acquire: Option<Acquire>,
    /// The queue timeout or the deadline, whichever comes first; `true` when
    /// it is the deadline.
    timer: Option<(Pin<Box<S>>, bool)>,
}

impl<S: Future<Output = ()>> Queued<S> {
    pub(crate) fn new(shared: Arc<Shared>, max_waiters: usize, timer: Option<(S, bool)>) -> Self {
        let acquire = Some(shared.semaphore.acquire_bounded(max_waiters));
        Self {
            shared,
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
    fn poll_permit(&mut self, cx: &mut Context<'_>) -> Poll<Result<Permit, AdmitError>> {
        let counters = &self.shared.counters;
        let Some(acquire) = self.acquire.as_mut() else {
            return Poll::Ready(Err(AdmitError::Closed));
        };
        match Pin::new(acquire).poll(cx) {
            Poll::Ready(Ok(permit)) => {
                counters.admitted.fetch_add(1, Ordering::Relaxed);
                return Poll::Ready(Ok(permit));
            }
            Poll::Ready(Err(AcquireError::QueueFull)) => {
                counters.shed.fetch_add(1, Ordering::Relaxed);
                return Poll::Ready(Err(AdmitError::Overloaded(Overloaded::new())));
            }
            Poll::Ready(Err(AcquireError::Closed)) => return Poll::Ready(Err(AdmitError::Closed)),
            Poll::Pending => {}
        }
        Poll::Pending
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
        self.acquire = None;
        Poll::Ready(Err(if is_deadline {
            counters.expired.fetch_add(1, Ordering::Relaxed);
            AdmitError::Expired
        } else {
            counters.queue_timeouts.fetch_add(1, Ordering::Relaxed);
            AdmitError::Overloaded(Overloaded::queue_timeout())
        }))
    }
}

/// Future of [`Admission::admit`]: resolves to a [`Permit`] or an [`AdmitError`].
///
/// Dropping it while queued leaves the queue; nothing is left behind.
#[must_use = "futures do nothing unless polled"]
pub struct Admit<C: Clock> {
    step: Step<C>,
}

enum Step<C: Clock> {
    Start(Admission<C>, Option<Instant>),
    Queued(Queued<C::Sleep>),
    Done,
}

impl<C: Clock> Admit<C> {
    pub(crate) fn new(admission: Admission<C>, deadline: Option<Instant>) -> Self {
        Self {
            step: Step::Start(admission, deadline),
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
        if let Step::Start(admission, deadline) = &self.step {
            match admission.decide(*deadline) {
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
