use super::release::Release;
use crate::error::BoxError;
use crate::semaphore::Permit;
use core::fmt;
use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{ready, Context, Poll};
use pin_project_lite::pin_project;

pin_project! {
    /// Response future of [`ConcurrencyLimit`](super::ConcurrencyLimit).
    ///
    /// Holds the request's permit; it is returned when this future completes
    /// or is dropped (or handed on in the response, see [`Release`]).
    #[must_use = "futures do nothing unless polled"]
    pub struct ResponseFuture<F, M> {
        #[pin]
        kind: Kind<F>,
        _release: PhantomData<fn() -> M>,
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<F> {
        Called { #[pin] future: F, permit: Option<Permit> },
        Failed { error: Option<BoxError> },
        Done,
    }
}

impl<F, M> ResponseFuture<F, M> {
    pub(crate) fn called(future: F, permit: Permit) -> Self {
        Self {
            kind: Kind::Called {
                future,
                permit: Some(permit),
            },
            _release: PhantomData,
        }
    }

    pub(crate) fn failed(error: BoxError) -> Self {
        Self {
            kind: Kind::Failed { error: Some(error) },
            _release: PhantomData,
        }
    }
}

impl<F, T, E, M> Future for ResponseFuture<F, M>
where
    F: Future<Output = Result<T, E>>,
    E: Into<BoxError>,
    M: Release,
{
    type Output = Result<M::Output<T>, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut kind = self.project().kind;
        let output = match kind.as_mut().project() {
            KindProj::Called { future, permit } => {
                let outcome = ready!(future.poll(cx));
                let permit = permit.take();
                match outcome {
                    Ok(response) => Ok(M::finish(response, permit)),
                    Err(error) => Err(error.into()),
                }
            }
            KindProj::Failed { error } => Err(error
                .take()
                .unwrap_or_else(|| crate::error::NotReady::new().into())),
            // Polled after completion: an error, never a panic.
            KindProj::Done => Err(crate::error::NotReady::new().into()),
        };
        kind.set(Kind::Done);
        Poll::Ready(output)
    }
}

impl<F, M> fmt::Debug for ResponseFuture<F, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}
