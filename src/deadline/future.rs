use crate::error::{BoxError, Expired};
use crate::time::{Clock, Instant};
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use pin_project_lite::pin_project;

pin_project! {
    /// Response future of [`Deadline`](super::Deadline): the inner response,
    /// or [`Expired`] once the deadline passes.
    #[must_use = "futures do nothing unless polled"]
    pub struct ResponseFuture<F, C: Clock> {
        #[pin]
        kind: Kind<F, C>,
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<F, C: Clock> {
        Running {
            #[pin]
            future: F,
            clock: C,
            at: Instant,
            timer: Option<Pin<Box<C::Sleep>>>,
        },
        Expired,
    }
}

impl<F, C: Clock> ResponseFuture<F, C> {
    pub(crate) fn running(
        future: F,
        clock: C,
        at: Instant,
        timer: Option<Pin<Box<C::Sleep>>>,
    ) -> Self {
        Self {
            kind: Kind::Running {
                future,
                clock,
                at,
                timer,
            },
        }
    }

    pub(crate) fn expired() -> Self {
        Self {
            kind: Kind::Expired,
        }
    }
}

impl<F, T, E, C> Future for ResponseFuture<F, C>
where
    F: Future<Output = Result<T, E>>,
    E: Into<BoxError>,
    C: Clock,
{
    type Output = Result<T, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().kind.project() {
            KindProj::Running {
                future,
                clock,
                at,
                timer,
            } => {
                if let Poll::Ready(outcome) = future.poll(cx) {
                    return Poll::Ready(outcome.map_err(Into::into));
                }
                // The timer is created only once the response is slow, so
                // fast responses cost no allocation.
                let at = *at;
                let timer = timer.get_or_insert_with(|| Box::pin(clock.sleep_until(at)));
                match timer.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Err(Expired::new().into())),
                    Poll::Pending => Poll::Pending,
                }
            }
            KindProj::Expired => Poll::Ready(Err(Expired::new().into())),
        }
    }
}

impl<F, C: Clock> fmt::Debug for ResponseFuture<F, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}
