use super::service::RateLimit;
use super::RateLimiter;
use crate::call::Unclassified;
use crate::error::{InvalidConfig, Parameter};
use crate::time::RealClock;
use core::fmt;
use core::time::Duration;
use tower_layer::Layer;

/// Wraps services in a [`RateLimit`] sharing one [`RateLimiter`].
///
/// [`new`](Self::new) sheds a call over its rate at once with
/// [`RateLimited`](crate::error::RateLimited); [`wait_at_most`](Self::wait_at_most)
/// lets it wait for its turn instead, if that comes within the bound. Calls
/// are keyed as [`read_call_with`](Self::read_call_with) says (the
/// [`Call`](crate::admission::Call)'s key; its criticality is not used);
/// by default they all share the unkeyed allowance.
pub struct RateLimitLayer<C, R = Unclassified> {
    limiter: RateLimiter<C>,
    read: R,
    max_wait: Option<Duration>,
}

impl<C: RealClock> RateLimitLayer<C> {
    /// Sheds calls over `limiter`'s rate.
    pub fn new(limiter: RateLimiter<C>) -> Self {
        Self {
            limiter,
            read: Unclassified,
            max_wait: None,
        }
    }
}

impl<C: RealClock, R> RateLimitLayer<C, R> {
    /// Lets a call over its rate wait for its turn when that comes within
    /// `max_wait` (longer than zero); later turns are refused at once.
    pub fn wait_at_most(self, max_wait: Duration) -> Result<Self, InvalidConfig> {
        if max_wait.is_zero() {
            return Err(InvalidConfig::new(Parameter::MaxWait));
        }
        Ok(Self {
            max_wait: Some(max_wait),
            ..self
        })
    }

    /// Keys each request as `read` says.
    pub fn read_call_with<R2>(self, read: R2) -> RateLimitLayer<C, R2> {
        RateLimitLayer {
            limiter: self.limiter,
            read,
            max_wait: self.max_wait,
        }
    }

    /// Keys each `http::Request` by the [`Key`](crate::Key) in its extensions
    /// (feature `http`).
    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    pub fn from_extensions(self) -> RateLimitLayer<C, crate::call::FromExtensions> {
        self.read_call_with(crate::call::FromExtensions)
    }

    /// The shared rate limiter (for stats).
    pub fn limiter(&self) -> &RateLimiter<C> {
        &self.limiter
    }
}

impl<S, C: RealClock, R: Clone> Layer<S> for RateLimitLayer<C, R> {
    type Service = RateLimit<S, C, R>;

    fn layer(&self, inner: S) -> Self::Service {
        RateLimit::new(
            inner,
            self.limiter.clone(),
            self.read.clone(),
            self.max_wait,
        )
    }
}

impl<C: Clone, R: Clone> Clone for RateLimitLayer<C, R> {
    fn clone(&self) -> Self {
        Self {
            limiter: self.limiter.clone(),
            read: self.read.clone(),
            max_wait: self.max_wait,
        }
    }
}

impl<C, R> fmt::Debug for RateLimitLayer<C, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitLayer")
            .field("limiter", &self.limiter)
            .field("max_wait", &self.max_wait)
            .finish_non_exhaustive()
    }
}
