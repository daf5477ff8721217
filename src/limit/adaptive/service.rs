use super::classify::{Classify, DefaultClassify};
use super::controller::Controller;
use super::future::SampledFuture;
use super::Limit;
use crate::limit::ConcurrencyLimit;
use crate::time::Clock;
use core::fmt;
use core::task::{Context, Poll};
use std::sync::Arc;
use tower_service::Service;

/// A [`ConcurrencyLimit`] whose limit an adaptive [`Limit`] moves: what
/// [`AdaptiveLimitLayer`](super::AdaptiveLimitLayer) builds.
///
/// `admission()` gives the stats (`stats().limit` is the current limit);
/// `get_ref().controller()` the [`Controller`].
pub type AdaptiveLimit<S, L, C, D = DefaultClassify> = ConcurrencyLimit<Sampled<S, L, C, D>, C>;

/// The inner half of an [`AdaptiveLimit`]: it sees only admitted calls,
/// times each from admission to completion, and feeds the [`Controller`].
pub struct Sampled<S, L, C, D = DefaultClassify> {
    inner: S,
    controller: Controller<L>,
    clock: C,
    classify: Arc<D>,
}

impl<S, L: Limit, C: Clock, D> Sampled<S, L, C, D> {
    /// Samples every call to `inner` into `controller`, timed by `clock`;
    /// `classify` tells drops from successes.
    pub fn new(inner: S, controller: Controller<L>, clock: C, classify: D) -> Self {
        Self {
            inner,
            controller,
            clock,
            classify: Arc::new(classify),
        }
    }

    /// The controller that moves the limit.
    pub fn controller(&self) -> &Controller<L> {
        &self.controller
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }
}

impl<S, L, C, D, Request> Service<Request> for Sampled<S, L, C, D>
where
    S: Service<Request>,
    L: Limit,
    C: Clock,
    D: Classify<S::Response, S::Error>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = SampledFuture<S::Future, L, C, D>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        // Called by the `ConcurrencyLimit` outside, with the permit held.
        let started = self.controller.start(&self.clock);
        SampledFuture::new(
            self.inner.call(request),
            self.controller.clone(),
            self.clock.clone(),
            Arc::clone(&self.classify),
            started,
        )
    }
}

impl<S: Clone, L, C: Clone, D> Clone for Sampled<S, L, C, D> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            controller: self.controller.clone(),
            clock: self.clock.clone(),
            classify: Arc::clone(&self.classify),
        }
    }
}

impl<S: fmt::Debug, L, C, D> fmt::Debug for Sampled<S, L, C, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sampled")
            .field("inner", &self.inner)
            .field("controller", &self.controller)
            .finish_non_exhaustive()
    }
}
