use super::classify::{Classify, DefaultClassify};
use super::controller::Controller;
use super::future::SampledFuture;
use super::sample_end::SampleEnd;
use super::Limit;
use crate::limit::concurrency::ReleaseOnCompletion;
use crate::limit::ConcurrencyLimit;
use crate::time::Clock;
use core::fmt;
use core::marker::PhantomData;
use core::task::{Context, Poll};
use std::sync::Arc;
use tower_service::Service;

/// A [`ConcurrencyLimit`] whose limit an adaptive [`Limit`] moves: what
/// [`AdaptiveLimitLayer`](super::AdaptiveLimitLayer) builds.
///
/// `admission()` gives the stats (`stats().limit` is the current limit);
/// `get_ref().controller()` the [`Controller`].
/// `M` says when a call's permit comes back, as for `ConcurrencyLimit`.
pub type AdaptiveLimit<S, L, C, D = DefaultClassify, M = ReleaseOnCompletion> =
    ConcurrencyLimit<Sampled<S, L, C, D, M>, C, M>;

/// The inner half of an [`AdaptiveLimit`]: it sees only admitted calls,
/// times each from admission to completion (or, where `M` holds the permit
/// in the body, to the body's end: see [`SampleEnd`]), and feeds the
/// [`Controller`].
pub struct Sampled<S, L, C, D = DefaultClassify, M = ReleaseOnCompletion> {
    inner: S,
    controller: Controller<L>,
    clock: C,
    classify: Arc<D>,
    end: PhantomData<fn() -> M>,
}

impl<S, L: Limit, C: Clock, D> Sampled<S, L, C, D> {
    /// Samples every call to `inner` into `controller`, timed by `clock`;
    /// `classify` tells drops from successes.
    pub fn new(inner: S, controller: Controller<L>, clock: C, classify: D) -> Self {
        Self::ending_as(inner, controller, clock, classify)
    }
}

impl<S, L: Limit, C: Clock, D, M> Sampled<S, L, C, D, M> {
    /// [`new`](Sampled::new), with the sample ending as `M` says.
    pub(crate) fn ending_as(inner: S, controller: Controller<L>, clock: C, classify: D) -> Self {
        Self {
            inner,
            controller,
            clock,
            classify: Arc::new(classify),
            end: PhantomData,
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

impl<S, L, C, D, M, Request> Service<Request> for Sampled<S, L, C, D, M>
where
    S: Service<Request>,
    L: Limit,
    C: Clock,
    D: Classify<S::Response, S::Error>,
    M: SampleEnd<S::Response, L, C>,
{
    type Response = M::Output;
    type Error = S::Error;
    type Future = SampledFuture<S::Future, L, C, D, M>;

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

impl<S: Clone, L, C: Clone, D, M> Clone for Sampled<S, L, C, D, M> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            controller: self.controller.clone(),
            clock: self.clock.clone(),
            classify: Arc::clone(&self.classify),
            end: PhantomData,
        }
    }
}

impl<S: fmt::Debug, L, C, D, M> fmt::Debug for Sampled<S, L, C, D, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sampled")
            .field("inner", &self.inner)
            .field("controller", &self.controller)
            .finish_non_exhaustive()
    }
}
