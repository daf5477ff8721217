use super::classify::Classify;
use super::controller::{Controller, Started};
use super::Limit;
use crate::time::Clock;
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{ready, Context, Poll};
use pin_project_lite::pin_project;
use std::sync::Arc;

pin_project! {
    /// Response future of [`Sampled`](super::Sampled): the inner future,
    /// timed from admission to completion.
    ///
    /// The sample is taken when the inner future completes, before the
    /// permit is returned. A future dropped before it completes gives no
    /// sample: a cancelled call ([`Ending::Aborted`](super::Ending::Aborted))
    /// says nothing about the origin.
    #[must_use = "futures do nothing unless polled"]
    pub struct SampledFuture<F, L, C, D> {
        #[pin]
        future: F,
        controller: Controller<L>,
        clock: C,
        classify: Arc<D>,
        started: Option<Started>,
    }
}

impl<F, L, C, D> SampledFuture<F, L, C, D> {
    pub(crate) fn new(
        future: F,
        controller: Controller<L>,
        clock: C,
        classify: Arc<D>,
        started: Started,
    ) -> Self {
        Self {
            future,
            controller,
            clock,
            classify,
            started: Some(started),
        }
    }
}

impl<F, T, E, L, C, D> Future for SampledFuture<F, L, C, D>
where
    F: Future<Output = Result<T, E>>,
    L: Limit,
    C: Clock,
    D: Classify<T, E>,
{
    type Output = Result<T, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let outcome = ready!(this.future.poll(cx));
        if let Some(started) = this.started.take() {
            let classified = this.classify.outcome(outcome.as_ref());
            this.controller.finish(started, &*this.clock, classified);
        }
        Poll::Ready(outcome)
    }
}

impl<F, L, C, D> fmt::Debug for SampledFuture<F, L, C, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SampledFuture")
            .field("started", &self.started)
            .finish_non_exhaustive()
    }
}
