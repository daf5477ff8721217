use super::{RateLimiter, Reservation};
use crate::error::{BoxError, NotReady, RateLimited};
use crate::oneshot::Oneshot;
use crate::time::Clock;
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{ready, Context, Poll};
use pin_project_lite::pin_project;
use tower_service::Service;

pin_project! {
    /// Response future of [`RateLimit`](super::RateLimit): refused at once,
    /// waiting for the call's reserved turn, or the inner call.
    ///
    /// Dropped while it waits, it gives its turn back (the allowance is not lost).
    #[must_use = "futures do nothing unless polled"]
    pub struct ResponseFuture<S: Service<Request>, Request, C: Clock> {
        #[pin]
        state: State<S, Request, C>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<S: Service<Request>, Request, C: Clock> {
        Refused { error: RateLimited },
        Waiting { sleep: Pin<Box<C::Sleep>>, turn: Turn<C>, service: Option<S>, request: Option<Request> },
        Calling { #[pin] call: Oneshot<S, Request> },
        Done,
    }
}

/// A reserved turn: given back if the call never takes it (`None` once taken).
struct Turn<C: Clock> {
    limiter: RateLimiter<C>,
    reservation: Option<Reservation>,
}

impl<C: Clock> Drop for Turn<C> {
    fn drop(&mut self) {
        if let Some(reservation) = self.reservation.take() {
            self.limiter.refund(reservation);
        }
    }
}

impl<S: Service<Request>, Request, C: Clock> ResponseFuture<S, Request, C> {
    pub(crate) fn call(service: S, request: Request) -> Self {
        Self::with(State::Calling {
            call: Oneshot::new(service, request),
        })
    }

    pub(crate) fn refused(error: RateLimited) -> Self {
        Self::with(State::Refused { error })
    }

    pub(crate) fn wait(
        limiter: &RateLimiter<C>,
        reservation: Reservation,
        service: S,
        request: Request,
    ) -> Self {
        Self::with(State::Waiting {
            sleep: Box::pin(limiter.clock().sleep_until(reservation.at())),
            turn: Turn {
                limiter: limiter.clone(),
                reservation: Some(reservation),
            },
            service: Some(service),
            request: Some(request),
        })
    }

    fn with(state: State<S, Request, C>) -> Self {
        Self { state }
    }
}

impl<S, Request, C> Future for ResponseFuture<S, Request, C>
where
    S: Service<Request>,
    S::Error: Into<BoxError>,
    C: Clock,
{
    type Output = Result<S::Response, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.project().state;
        loop {
            match state.as_mut().project() {
                StateProj::Refused { error } => {
                    let error = *error;
                    state.set(State::Done);
                    return Poll::Ready(Err(error.into()));
                }
                StateProj::Waiting {
                    sleep,
                    turn,
                    service,
                    request,
                } => {
                    ready!(sleep.as_mut().poll(cx));
                    turn.reservation = None;
                    let (Some(service), Some(request)) = (service.take(), request.take()) else {
                        state.set(State::Done);
                        return Poll::Ready(Err(NotReady::new().into()));
                    };
                    state.set(State::Calling {
                        call: Oneshot::new(service, request),
                    });
                }
                StateProj::Calling { call } => {
                    let outcome = ready!(call.poll(cx));
                    state.set(State::Done);
                    return Poll::Ready(outcome.map_err(Into::into));
                }
                // Polled after completion: an error, never a panic.
                StateProj::Done => return Poll::Ready(Err(NotReady::new().into())),
            }
        }
    }
}

impl<S: Service<Request>, Request, C: Clock> fmt::Debug for ResponseFuture<S, Request, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}
