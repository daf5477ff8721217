use crate::error::BoxError;
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{ready, Context, Poll};
use core::time::Duration;
use pin_project_lite::pin_project;
use std::convert::Infallible;

pin_project! {
    /// Response future of [`RefusalResponse`](super::RefusalResponse): the
    /// inner response, or its error answered as one.
    #[must_use = "futures do nothing unless polled"]
    pub struct RefusalResponseFuture<F> {
        #[pin]
        state: State<F>,
        retry_after: Duration,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<F> {
        Called { #[pin] future: F },
        // The inner service failed to become ready: it was not called.
        NotReady { error: Option<BoxError> },
    }
}

impl<F> RefusalResponseFuture<F> {
    pub(super) fn called(future: F, retry_after: Duration) -> Self {
        Self {
            state: State::Called { future },
            retry_after,
        }
    }

    pub(super) fn not_ready(error: BoxError, retry_after: Duration) -> Self {
        Self {
            state: State::NotReady { error: Some(error) },
            retry_after,
        }
    }
}

impl<F, B, E> Future for RefusalResponseFuture<F>
where
    F: Future<Output = Result<http::Response<B>, E>>,
    E: Into<BoxError>,
    B: Default,
{
    type Output = Result<http::Response<B>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let error = match this.state.project() {
            StateProj::Called { future } => match ready!(future.poll(cx)) {
                Ok(response) => return Poll::Ready(Ok(response)),
                Err(error) => error.into(),
            },
            StateProj::NotReady { error } => match error.take() {
                Some(error) => error,
                // Polled again after completing.
                None => "polled after completion".into(),
            },
        };
        Poll::Ready(Ok(super::respond(&error, *this.retry_after)))
    }
}

impl<F> fmt::Debug for RefusalResponseFuture<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RefusalResponseFuture")
            .field("retry_after", &self.retry_after)
            .finish_non_exhaustive()
    }
}
