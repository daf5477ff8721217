use super::future::{Refusal, ResponseFuture};
use crate::admission::{Admission, AdmitError, Call, Decision, Queued};
use crate::error::{BoxError, InvalidConfig};
use crate::load_shed::probe;
use crate::release::{Release, ReleaseOnCompletion};
use crate::semaphore::Permit;
use crate::time::{Clock, NoClock};
use core::fmt;
use core::marker::PhantomData;
use core::task::{Context, Poll};
use tower_service::Service;

/// Limits the number of in-flight requests to the inner service.
///
/// Built by [`ConcurrencyLimitLayer`](super::ConcurrencyLimitLayer) (one
/// limit shared by every service the layer wraps; `.per_service()` for one
/// each), [`GlobalConcurrencyLimitLayer`](super::GlobalConcurrencyLimitLayer)
/// (around an [`Admission`] you already have), or
/// [`with_admission`](Self::with_admission).
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
    permit: Option<Permit>,
    state: State<C::Sleep>,
    _release: PhantomData<fn() -> M>,
}

enum State<Sl> {
    /// No reservation: the next `poll_ready` asks for one.
    Idle,
    /// Queued for a permit.
    Waiting(Queued<Sl>),
    /// Admission was refused; the next `call` reports why.
    Refused(AdmitError),
}

impl<S> ConcurrencyLimit<S> {
    /// At most `max_in_flight` requests at once; further callers wait (FIFO).
    /// Refuses `max_in_flight == 0` ([`InvalidConfig`]).
    pub fn new(inner: S, max_in_flight: usize) -> Result<Self, InvalidConfig> {
        Ok(Self::with_admission(inner, Admission::wait(max_in_flight)?))
    }
}

impl<S, C: Clock, M> ConcurrencyLimit<S, C, M> {
    /// Limits `inner` with an existing (possibly shared) admission limit.
    pub fn with_admission(inner: S, admission: Admission<C>) -> Self {
        Self {
            inner,
            admission,
            permit: None,
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
    M: Release<S::Response>,
{
    type Response = M::Output;
    type Error = BoxError;
    type Future = ResponseFuture<S::Future, M>;

    #[inline(always)]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        if self.permit.is_none() {
            if matches!(self.state, State::Idle) {
                self.permit = self.admission.try_admit();
            }
            if self.permit.is_none() {
                if self.poll_slow(cx).is_pending() {
                    return Poll::Pending;
                }
                if self.permit.is_none() {
                    return Poll::Ready(Ok(()));
                }
            }
        }
        match self.inner.poll_ready(cx) {
            Poll::Ready(Err(error)) => {
                self.permit = None;
                Poll::Ready(Err(error.into()))
            }
            other => other.map_err(Into::into),
        }
    }

    #[inline(always)]
    fn call(&mut self, request: Request) -> Self::Future {
        match self.permit.take() {
            Some(permit) => ResponseFuture::called(self.inner.call(request), permit),
            None => ResponseFuture::failed(self.refusal()),
        }
    }
}

impl<S, C: Clock, M> ConcurrencyLimit<S, C, M> {
    #[inline(never)]
    fn poll_slow(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            match &mut self.state {
                State::Idle => {
                    // A `LoadShed` right outside asks for a probe: it will
                    // reject this request, so queue nothing (no waiter, no
                    // timer) and let it know.
                    if probe::answer(&*self, || self.admission.would_queue()) {
                        return Poll::Pending;
                    }
                    self.state = match self.admission.decide(Call::default(), None) {
                        Decision::Admitted(permit) => {
                            self.permit = Some(permit);
                            return Poll::Ready(());
                        }
                        Decision::Rejected(error) => State::Refused(error),
                        Decision::Queued(queued) => State::Waiting(queued),
                    };
                }
                State::Waiting(queued) => match queued.poll_admit(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Ok(permit)) => {
                        self.state = State::Idle;
                        self.permit = Some(permit);
                        return Poll::Ready(());
                    }
                    Poll::Ready(Err(error)) => self.state = State::Refused(error),
                },
                State::Refused(_) => return Poll::Ready(()),
            }
        }
    }

    #[inline(never)]
    /// Why a `call` without a reserved permit fails.
    fn refusal(&mut self) -> Refusal {
        match core::mem::replace(&mut self.state, State::Idle) {
            State::Refused(error) => Refusal::Admission(error),
            not_ready => {
                self.state = not_ready;
                Refusal::NotReady
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
            State::Refused(_) => "refused",
        };
        f.debug_struct("ConcurrencyLimit")
            .field("inner", &self.inner)
            .field("admission", &self.admission)
            .field("state", &state)
            .finish()
    }
}
