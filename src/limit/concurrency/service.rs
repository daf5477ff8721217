use super::future::ResponseFuture;
use super::release::{Release, ReleaseOnCompletion};
use crate::admission::{Admission, AdmitError, Decision, Queued};
use crate::error::{BoxError, NotReady};
use crate::semaphore::Permit;
use crate::time::{Clock, NoClock};
use core::fmt;
use core::marker::PhantomData;
use core::task::{Context, Poll};
use tower_service::Service;

/// Limits the number of in-flight requests to the inner service.
///
/// Built by [`ConcurrencyLimitLayer`](super::ConcurrencyLimitLayer) (one
/// limit per wrapped service), [`GlobalConcurrencyLimitLayer`](super::GlobalConcurrencyLimitLayer)
/// (one limit shared by all), or [`with_admission`](Self::with_admission).
///
/// Readiness follows tower's two-step protocol: `poll_ready` reserves a
/// permit, `call` moves it into the response future. When the
/// [`Policy`](crate::admission::Policy) rejects a request, `poll_ready`
/// still reports ready and the following `call` fails with
/// [`Overloaded`](crate::error::Overloaded) — a poll_ready error would tell
/// tower's balancers and buffers that the service is broken for good.
///
/// Clones share the limit, never a reservation: a fresh clone always starts
/// unreserved.
pub struct ConcurrencyLimit<S, C: Clock = NoClock, M = ReleaseOnCompletion> {
    inner: S,
    admission: Admission<C>,
    state: State<C::Sleep>,
    _release: PhantomData<fn() -> M>,
}

enum State<Sl> {
    /// No reservation: the next `poll_ready` asks for one.
    Idle,
    /// Queued for a permit.
    Waiting(Queued<Sl>),
    /// A permit is reserved for the next `call`.
    Reserved(Permit),
    /// Admission was refused; the next `call` reports why.
    Refused(AdmitError),
}

impl<S> ConcurrencyLimit<S> {
    /// At most `max_in_flight` requests at once; further callers wait (FIFO).
    pub fn new(inner: S, max_in_flight: usize) -> Self {
        Self::with_admission(inner, Admission::wait(max_in_flight))
    }
}

impl<S, C: Clock, M> ConcurrencyLimit<S, C, M> {
    /// Limits `inner` with an existing (possibly shared) admission limit.
    pub fn with_admission(inner: S, admission: Admission<C>) -> Self {
        Self {
            inner,
            admission,
            state: State::Idle,
            _release: PhantomData,
        }
    }

    /// The admission limit (for stats, `set_limit` or `close`).
    pub fn admission(&self) -> &Admission<C> {
        &self.admission
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// The inner service, dropping any reservation.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S, C, M, Request> Service<Request> for ConcurrencyLimit<S, C, M>
where
    S: Service<Request>,
    S::Error: Into<BoxError>,
    C: Clock,
    M: Release,
{
    type Response = M::Output<S::Response>;
    type Error = BoxError;
    type Future = ResponseFuture<S::Future, M>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        loop {
            match &mut self.state {
                State::Idle => {
                    self.state = match self.admission.decide(None) {
                        Decision::Admitted(permit) => State::Reserved(permit),
                        Decision::Rejected(error) => State::Refused(error),
                        Decision::Queued(queued) => State::Waiting(queued),
                    };
                }
                State::Waiting(queued) => {
                    self.state = match queued.poll_admit(cx) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(Ok(permit)) => State::Reserved(permit),
                        Poll::Ready(Err(error)) => State::Refused(error),
                    };
                }
                // The call will fail; the inner service is not consulted.
                State::Refused(_) => return Poll::Ready(Ok(())),
                State::Reserved(_) => {
                    return match self.inner.poll_ready(cx) {
                        Poll::Ready(Err(error)) => {
                            self.state = State::Idle;
                            Poll::Ready(Err(error.into()))
                        }
                        other => other.map_err(Into::into),
                    };
                }
            }
        }
    }

    fn call(&mut self, request: Request) -> Self::Future {
        match core::mem::replace(&mut self.state, State::Idle) {
            State::Reserved(permit) => ResponseFuture::called(self.inner.call(request), permit),
            State::Refused(error) => ResponseFuture::failed(error.into_box_error()),
            not_ready @ (State::Idle | State::Waiting(_)) => {
                self.state = not_ready;
                ResponseFuture::failed(NotReady::new().into())
            }
        }
    }
}

impl<S: Clone, C: Clock, M> Clone for ConcurrencyLimit<S, C, M> {
    /// A clone shares the limit but starts without a reservation.
    fn clone(&self) -> Self {
        Self::with_admission(self.inner.clone(), self.admission.clone())
    }
}

impl<S: fmt::Debug, C: Clock + fmt::Debug, M> fmt::Debug for ConcurrencyLimit<S, C, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.state {
            State::Idle => "idle",
            State::Waiting(_) => "waiting",
            State::Reserved(_) => "reserved",
            State::Refused(_) => "refused",
        };
        f.debug_struct("ConcurrencyLimit")
            .field("inner", &self.inner)
            .field("admission", &self.admission)
            .field("state", &state)
            .finish()
    }
}
