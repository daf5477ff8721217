use crate::error::{BoxError, Expired, NotReady};
use crate::time::{Clock, Instant};
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{ready, Context, Poll};
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
        Done,
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
        let mut kind = self.project().kind;
        let output = match kind.as_mut().project() {
            KindProj::Running {
                future,
                clock,
                at,
                timer,
            } => {
                if let Poll::Ready(outcome) = future.poll(cx) {
                    outcome.map_err(Into::into)
                } else {
                    // The timer is created only once the response is slow, so
                    // fast responses cost no allocation.
                    let at = *at;
                    let timer = timer.get_or_insert_with(|| Box::pin(clock.sleep_until(at)));
                    ready!(timer.as_mut().poll(cx));
                    Err(Expired::new().into())
                }
            }
            KindProj::Expired => Err(Expired::new().into()),
            // Polled after completion: an error, never a panic.
            KindProj::Done => Err(NotReady::new().into()),
        };
        kind.set(Kind::Done);
        Poll::Ready(output)
    }
}

impl<F, C: Clock> fmt::Debug for ResponseFuture<F, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}
