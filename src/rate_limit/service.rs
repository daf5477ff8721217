use super::future::ResponseFuture;
use super::RateLimiter;
use crate::call::{ReadCall, Unclassified};
use crate::error::BoxError;
use crate::time::RealClock;
use core::fmt;
use core::task::{Context, Poll};
use core::time::Duration;
use tower_service::Service;

/// Limits the rate of calls per key: built by
/// [`RateLimitLayer`](super::RateLimitLayer).
///
/// Always ready: the key is only known from the request, so the check
/// happens in `call`, and the inner service is polled ready and called from
/// the response future (on a clone, hence `S: Clone`) once the call is
/// allowed. Nothing is reserved while a refused call is answered.
pub struct RateLimit<S, C, R = Unclassified> {
    inner: S,
    limiter: RateLimiter<C>,
    read: R,
    /// `None`: shed at once; `Some`: wait for the call's turn up to this long.
    max_wait: Option<Duration>,
}

impl<S, C: RealClock, R> RateLimit<S, C, R> {
    /// Limits `inner` with `limiter`, keyed as `read` says; sheds over-rate
    /// calls at once, or lets them wait up to `max_wait` for their turn.
    pub fn new(inner: S, limiter: RateLimiter<C>, read: R, max_wait: Option<Duration>) -> Self {
        Self {
            inner,
            limiter,
            read,
            max_wait,
        }
    }

    /// The rate limiter (for stats).
    pub fn limiter(&self) -> &RateLimiter<C> {
        &self.limiter
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

impl<S, C, R, Request> Service<Request> for RateLimit<S, C, R>
where
    S: Service<Request> + Clone,
    S::Error: Into<BoxError>,
    C: RealClock,
    R: ReadCall<Request>,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = ResponseFuture<S, Request, C>;

    /// Always ready: the rate is checked per request, in `call`.
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let key = self.read.read_call(&request).into_key();
        let limiter = &self.limiter;
        let Some(max_wait) = self.max_wait else {
            return match limiter.check_at(key.as_ref(), limiter.clock().now()) {
                Ok(_) => ResponseFuture::call(self.inner.clone(), request),
                Err(limited) => ResponseFuture::refused(limited),
            };
        };
        match limiter.reserve(key.as_ref(), max_wait) {
            // Taken at once: nothing to give back.
            Ok(turn) if turn.at() <= limiter.clock().now() => {
                ResponseFuture::call(self.inner.clone(), request)
            }
            Ok(turn) => ResponseFuture::wait(limiter, turn, self.inner.clone(), request),
            Err(limited) => ResponseFuture::refused(limited),
        }
    }
}

impl<S: Clone, C: Clone, R: Clone> Clone for RateLimit<S, C, R> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            limiter: self.limiter.clone(),
            read: self.read.clone(),
            max_wait: self.max_wait,
        }
    }
}

impl<S: fmt::Debug, C, R> fmt::Debug for RateLimit<S, C, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimit")
            .field("inner", &self.inner)
            .field("limiter", &self.limiter)
            .field("max_wait", &self.max_wait)
            .finish_non_exhaustive()
    }
}
