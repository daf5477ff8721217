use crate::error::{BoxError, NotReady, Overloaded};
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{ready, Context, Poll};
use pin_project_lite::pin_project;

pin_project! {
    /// Response future of [`LoadShed`](super::LoadShed): the inner response,
    /// or `Overloaded` at once.
    #[must_use = "futures do nothing unless polled"]
    pub struct ResponseFuture<F> {
        #[pin]
        kind: Kind<F>,
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<F> {
        Called { #[pin] future: F },
        Overloaded,
        Done,
    }
}

impl<F> ResponseFuture<F> {
    pub(crate) fn called(future: F) -> Self {
        Self {
            kind: Kind::Called { future },
        }
    }

    pub(crate) fn overloaded() -> Self {
        Self {
            kind: Kind::Overloaded,
        }
    }
}

impl<F, T, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<T, E>>,
    E: Into<BoxError>,
{
    type Output = Result<T, BoxError>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut kind = self.project().kind;
        let output = match kind.as_mut().project() {
            KindProj::Called { future } => ready!(future.poll(cx)).map_err(Into::into),
            KindProj::Overloaded => Err(Overloaded::new().into()),
            // Polled after completion: an error, never a panic.
            KindProj::Done => Err(NotReady::new().into()),
        };
        kind.set(Kind::Done);
        Poll::Ready(output)
    }
}

impl<F> fmt::Debug for ResponseFuture<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}
