//! A response body that ends its call's adaptive sample when it ends.

use super::{Limit, Outcome, PendingSample, SampleEnd};
use crate::http_body::{BodyEnd, HoldInBody};
use crate::time::Clock;
use core::fmt;
use core::pin::Pin;
use core::task::{ready, Context, Poll};
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

pin_project! {
    /// A response body that takes its call's sample when it ends: served at
    /// its end, dropped at an error, and none when it is dropped before
    /// (the client went away: nothing learned about the origin).
    ///
    /// Frames, errors, trailers and size hints are the inner body's.
    pub struct SampledBody<B, L, C> {
        pending: Option<PendingSample<L, C>>,
        #[pin]
        inner: B,
    }
}

impl<B: Body, L: Limit, C: Clock> Body for SampledBody<B, L, C> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let mut this = self.project();
        let frame = ready!(this.inner.as_mut().poll_frame(cx));
        let outcome = BodyEnd::of(&frame, &*this.inner).map(|end| match end {
            BodyEnd::Done => Outcome::Served,
            BodyEnd::Failed => Outcome::Dropped,
        });
        if let Some((outcome, pending)) = outcome.zip(this.pending.take()) {
            pending.finish(outcome);
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl<B, L, C> fmt::Debug for SampledBody<B, L, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SampledBody")
            .field("pending", &self.pending.is_some())
            .finish_non_exhaustive()
    }
}

/// The sample of an `http::Response` whose body holds the permit ends with
/// the body.
impl<B, L: Limit, C: Clock> SampleEnd<http::Response<B>, L, C> for HoldInBody {
    type Output = http::Response<SampledBody<B, L, C>>;

    fn end(response: http::Response<B>, pending: PendingSample<L, C>) -> Self::Output {
        response.map(|inner| SampledBody {
            pending: Some(pending),
            inner,
        })
    }

    fn pass(response: http::Response<B>) -> Self::Output {
        response.map(|inner| SampledBody {
            pending: None,
            inner,
        })
    }
}
