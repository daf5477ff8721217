use crate::admission::{AdmitError, Decision, Queued};
use crate::error::{BoxError, NotReady};
use crate::limit::concurrency::Release;
use crate::oneshot::Oneshot;
use crate::semaphore::Permit;
use crate::time::Clock;
use core::fmt;
use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{ready, Context, Poll};
use pin_project_lite::pin_project;
use tower_service::Service;

pin_project! {
    /// Response future of [`ClassifiedLimit`](super::ClassifiedLimit): the
    /// request's wait in the queue (if it had to wait), then the inner call
    /// with the permit held.
    ///
    /// Dropping it while admitting leaves the queue; dropping it later
    /// returns the permit (or, with [`Release`], the response carries it).
    #[must_use = "futures do nothing unless polled"]
    pub struct ResponseFuture<S: Service<Request>, Request, C: Clock, M> {
        #[pin]
        state: State<S, Request, C>,
        _release: PhantomData<fn() -> M>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<S: Service<Request>, Request, C: Clock> {
        Queued { queued: Queued<C::Sleep>, service: Option<S>, request: Option<Request> },
        Running { #[pin] call: Oneshot<S, Request>, permit: Option<Permit> },
        Refused { error: AdmitError },
        Done,
    }
}

impl<S: Service<Request>, Request, C: Clock, M> ResponseFuture<S, Request, C, M> {
    /// The call, admitted at once with `permit`.
    #[inline]
    pub(crate) fn admitted(permit: Permit, service: S, request: Request) -> Self {
        Self {
            state: State::Running {
                call: Oneshot::new(service, request),
                permit: Some(permit),
            },
            _release: PhantomData,
        }
    }

    /// The call, as its admission was decided in `call`: admitted at once,
    /// queued, or refused.
    pub(crate) fn new(decision: Decision<C::Sleep>, service: S, request: Request) -> Self {
        let state = match decision {
            Decision::Admitted(permit) => State::Running {
                call: Oneshot::new(service, request),
                permit: Some(permit),
            },
            Decision::Queued(queued) => State::Queued {
                queued,
                service: Some(service),
                request: Some(request),
            },
            Decision::Rejected(error) => State::Refused { error },
        };
        Self {
            state,
            _release: PhantomData,
        }
    }
}

impl<S, Request, C, M> Future for ResponseFuture<S, Request, C, M>
where
    S: Service<Request>,
    S::Error: Into<BoxError>,
    C: Clock,
    M: Release<S::Response>,
{
    type Output = Result<M::Output, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.project().state;
        loop {
            match state.as_mut().project() {
                StateProj::Refused { error } => {
                    let error = error.into_box_error();
                    state.set(State::Done);
                    return Poll::Ready(Err(error));
                }
                StateProj::Queued {
                    queued,
                    service,
                    request,
                } => {
                    let admitted = ready!(queued.poll_admit(cx));
                    let (permit, service, request) =
                        match (admitted, service.take(), request.take()) {
                            (Ok(permit), Some(service), Some(request)) => {
                                (permit, service, request)
                            }
                            (admitted, ..) => {
                                let error = match admitted {
                                    Err(error) => error.into_box_error(),
                                    // Polled again after a panic: never a second call.
                                    Ok(_) => NotReady::new().into(),
                                };
                                state.set(State::Done);
                                return Poll::Ready(Err(error));
                            }
                        };
                    state.set(State::Running {
                        call: Oneshot::new(service, request),
                        permit: Some(permit),
                    });
                }
                StateProj::Running { call, permit } => {
                    let outcome = ready!(call.poll(cx));
                    let permit = permit.take();
                    state.set(State::Done);
                    return Poll::Ready(match outcome {
                        Ok(response) => Ok(M::finish(response, permit)),
                        Err(error) => Err(error.into()),
                    });
                }
                // Polled after completion: an error, never a panic.
                StateProj::Done => return Poll::Ready(Err(NotReady::new().into())),
            }
        }
    }
}

impl<S: Service<Request>, Request, C: Clock, M> fmt::Debug for ResponseFuture<S, Request, C, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}
