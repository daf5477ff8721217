use super::RefusalResponseFuture;
use crate::error::BoxError;
use core::task::{ready, Context, Poll};
use core::time::Duration;
use std::convert::Infallible;
use tower_service::Service;

/// A service whose errors are answered as HTTP responses (see [the
/// module](super)); it never fails.
#[derive(Debug)]
pub struct RefusalResponse<S> {
    inner: S,
    retry_after: Duration,
    /// The inner service's readiness error, answered at the next call.
    not_ready: Option<BoxError>,
}

impl<S: Clone> Clone for RefusalResponse<S> {
    fn clone(&self) -> Self {
        Self::new(self.inner.clone(), self.retry_after)
    }
}

impl<S> RefusalResponse<S> {
    /// `inner`, its refusals answered with `retry_after` where they have no
    /// time of their own.
    pub const fn new(inner: S, retry_after: Duration) -> Self {
        Self {
            inner,
            retry_after,
            not_ready: None,
        }
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }
}

impl<S, Request, B> Service<Request> for RefusalResponse<S>
where
    S: Service<Request, Response = http::Response<B>>,
    S::Error: Into<BoxError>,
    B: Default,
{
    type Response = http::Response<B>;
    type Error = Infallible;
    type Future = RefusalResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        if self.not_ready.is_some() {
            return Poll::Ready(Ok(()));
        }
        // A readiness error (a load shed that refuses in `poll_ready`) is
        // answered at the call, which then does not reach the inner service.
        if let Err(error) = ready!(self.inner.poll_ready(cx)) {
            self.not_ready = Some(error.into());
        }
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        match self.not_ready.take() {
            Some(error) => RefusalResponseFuture::not_ready(error, self.retry_after),
            None => RefusalResponseFuture::called(self.inner.call(request), self.retry_after),
        }
    }
}
