use super::future::ResponseFuture;
use crate::error::BoxError;
use core::task::{Context, Poll};
use tower_service::Service;

/// Rejects requests with [`Overloaded`](crate::error::Overloaded) whenever
/// the inner service is not ready, instead of waiting for it.
///
/// ```
/// use edgeshed::load_shed::LoadShed;
/// use edgeshed::limit::ConcurrencyLimit;
/// use tower_service::Service;
/// use std::future::poll_fn;
/// # futures::executor::block_on(async {
/// let echo = tower::service_fn(|x: u32| async move { Ok::<_, std::convert::Infallible>(x) });
/// let mut svc = LoadShed::new(ConcurrencyLimit::new(echo, 0)); // no capacity at all
/// poll_fn(|cx| svc.poll_ready(cx)).await.unwrap(); // ready: the decision is made
/// let error = svc.call(1).await.unwrap_err();
/// assert!(error.is::<edgeshed::error::Overloaded>());
/// # });
/// ```
#[derive(Debug)]
pub struct LoadShed<S> {
    inner: S,
    inner_ready: bool,
}

impl<S> LoadShed<S> {
    /// Sheds load in front of `inner`.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            inner_ready: false,
        }
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// The inner service.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S, Request> Service<Request> for LoadShed<S>
where
    S: Service<Request> + Clone,
    S::Error: Into<BoxError>,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = ResponseFuture<S::Future>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        match self.inner.poll_ready(cx) {
            Poll::Ready(Ok(())) => self.inner_ready = true,
            Poll::Ready(Err(error)) => return Poll::Ready(Err(error.into())),
            Poll::Pending => {
                // Withdraw the pending readiness (e.g. a queued semaphore
                // waiter) so that this instance holds nothing while the
                // request it would have served is rejected.
                self.inner = self.inner.clone();
                self.inner_ready = false;
            }
        }
        Poll::Ready(Ok(()))
    }

    #[inline]
    fn call(&mut self, request: Request) -> Self::Future {
        if core::mem::take(&mut self.inner_ready) {
            ResponseFuture::called(self.inner.call(request))
        } else {
            ResponseFuture::overloaded()
        }
    }
}

impl<S: Clone> Clone for LoadShed<S> {
    /// A clone starts not ready, like any fresh service.
    fn clone(&self) -> Self {
        Self::new(self.inner.clone())
    }
}
