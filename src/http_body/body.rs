use crate::semaphore::Permit;
use core::fmt;
use core::pin::Pin;
use core::task::{ready, Context, Poll};
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

pin_project! {
    /// A response body that holds an admission permit until it is done: the
    /// permit is returned when the body ends, yields an error, or is dropped.
    ///
    /// Frames, errors, trailers and size hints are the inner body's, unchanged.
    pub struct PermitBody<B> {
        // Declared (and so dropped) before `inner`: whatever observes the
        // inner body's drop sees the permit already returned.
        permit: Option<Permit>,
        #[pin]
        inner: B,
    }
}

impl<B> PermitBody<B> {
    /// `inner`, holding `permit` until it is done (`None`: holds nothing).
    pub fn new(inner: B, permit: Option<Permit>) -> Self {
        Self { permit, inner }
    }

    /// Whether the body still holds its permit.
    pub fn holds_permit(&self) -> bool {
        self.permit.is_some()
    }

    /// The inner body.
    pub fn get_ref(&self) -> &B {
        &self.inner
    }

    /// The inner body and the permit, if it is still held.
    pub fn into_parts(self) -> (B, Option<Permit>) {
        (self.inner, self.permit)
    }
}

/// How a body ended with the frame it just gave, if it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodyEnd {
    /// Its end, or its last frame (hyper stops polling once the body says
    /// so): it will not be read any further.
    Done,
    /// An error: it will not be read any further either.
    Failed,
}

impl BodyEnd {
    /// Whether `inner`'s `frame` (just polled) ended it, and how.
    pub(crate) fn of<B: Body>(
        frame: &Option<Result<Frame<B::Data>, B::Error>>,
        inner: &B,
    ) -> Option<Self> {
        match frame {
            None => Some(Self::Done),
            Some(Err(_)) => Some(Self::Failed),
            Some(Ok(_)) => inner.is_end_stream().then_some(Self::Done),
        }
    }
}

impl<B: Body> Body for PermitBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let mut this = self.project();
        let frame = ready!(this.inner.as_mut().poll_frame(cx));
        if BodyEnd::of(&frame, &*this.inner).is_some() {
            this.permit.take();
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

impl<B> fmt::Debug for PermitBody<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PermitBody")
            .field("holds_permit", &self.permit.is_some())
            .finish_non_exhaustive()
    }
}
