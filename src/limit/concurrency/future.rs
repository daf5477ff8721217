use crate::admission::AdmitError;
use crate::error::{BoxError, NotReady};
use crate::release::Release;
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
        Failed { error: Refusal },
        Done,
    }
}

/// Why a call fails without reaching the inner service. Small and `Copy`:
/// the boxed error is only built when the future is polled.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Refusal {
    /// Admission was refused.
    Admission(AdmitError),
    /// `call` came without readiness.
    NotReady,
}

impl Refusal {
    fn into_box_error(self) -> BoxError {
        match self {
            Refusal::Admission(error) => error.into_box_error(),
            Refusal::NotReady => NotReady::new().into(),
        }
    }
}

impl<F, M> ResponseFuture<F, M> {
    #[inline(always)]
    pub(crate) fn called(future: F, permit: Permit) -> Self {
        Self {
            kind: Kind::Called {
                future,
                permit: Some(permit),
            },
            _release: PhantomData,
        }
    }

    #[cold]
    pub(crate) fn failed(error: Refusal) -> Self {
        Self {
            kind: Kind::Failed { error },
            _release: PhantomData,
        }
    }
}

impl<F, T, E, M> Future for ResponseFuture<F, M>
where
    F: Future<Output = Result<T, E>>,
    E: Into<BoxError>,
    M: Release<T>,
{
    type Output = Result<M::Output, BoxError>;

    #[inline(always)]
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
            KindProj::Failed { error } => Err(error.into_box_error()),
            // Polled after completion: an error, never a panic.
            KindProj::Done => Err(NotReady::new().into()),
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
