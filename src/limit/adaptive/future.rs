use super::classify::Classify;
use super::controller::{Controller, Started};
use super::outcome::Outcome;
use super::sample_end::{PendingSample, SampleEnd};
use super::Limit;
use crate::release::ReleaseOnCompletion;
use crate::time::Clock;
use core::fmt;
use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{ready, Context, Poll};
use pin_project_lite::pin_project;
use std::sync::Arc;

pin_project! {
    /// Response future of [`Sampled`](super::Sampled): the inner future,
    /// timed from admission to completion.
    ///
    /// The sample is taken when the inner future completes, before the
    /// permit is returned, or, where `M` holds the permit in an
    /// `http::Response`'s body, when the body ends (see
    /// [`SampleEnd`](super::SampleEnd)). A future dropped before it
    /// completes gives no sample: a cancelled call
    /// ([`Ending::Aborted`](super::Ending::Aborted)) says nothing about the
    /// origin.
    #[must_use = "futures do nothing unless polled"]
    pub struct SampledFuture<F, L, C, D, M = ReleaseOnCompletion> {
        #[pin]
        future: F,
        controller: Controller<L>,
        clock: C,
        classify: Arc<D>,
        started: Option<Started>,
        end: PhantomData<fn() -> M>,
    }
}

impl<F, L, C, D, M> SampledFuture<F, L, C, D, M> {
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
            end: PhantomData,
        }
    }
}

impl<F, T, E, L, C, D, M> Future for SampledFuture<F, L, C, D, M>
where
    F: Future<Output = Result<T, E>>,
    L: Limit,
    C: Clock,
    D: Classify<T, E>,
    M: SampleEnd<T, L, C>,
{
    type Output = Result<M::Output, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let result = ready!(this.future.poll(cx));
        let Some(started) = this.started.take() else {
            // Polled again after completing: no second sample.
            return Poll::Ready(result.map(M::pass));
        };
        let classified = this.classify.outcome(result.as_ref());
        Poll::Ready(match (result, classified) {
            (Ok(response), Outcome::Served) => {
                let pending = PendingSample {
                    controller: this.controller.clone(),
                    clock: this.clock.clone(),
                    started,
                };
                Ok(M::end(response, pending))
            }
            (result, outcome) => {
                // A drop is a drop at once; an ignored call is no sample.
                this.controller.finish(started, &*this.clock, outcome);
                result.map(M::pass)
            }
        })
    }
}

impl<F, L, C, D, M> fmt::Debug for SampledFuture<F, L, C, D, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SampledFuture")
            .field("started", &self.started)
            .finish_non_exhaustive()
    }
}
