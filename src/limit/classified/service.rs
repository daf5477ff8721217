use super::future::ResponseFuture;
use crate::admission::{Admission, ReadCall, Unclassified};
use crate::error::BoxError;
use crate::limit::concurrency::{Release, ReleaseOnCompletion};
use crate::time::Clock;
use core::fmt;
use core::marker::PhantomData;
use core::task::{Context, Poll};
use tower_service::Service;

/// A concurrency limit that admits each request by its own
/// [`Call`](crate::admission::Call): built by
/// [`ClassifiedLimitLayer`](super::ClassifiedLimitLayer); see the
/// [module](super) for how it differs from [`ConcurrencyLimit`](crate::limit::ConcurrencyLimit).
///
/// Always ready; the admission (and the inner service's readiness) happen
/// in the response future. Clones share the admission.
pub struct ClassifiedLimit<S, C: Clock, R = Unclassified, M = ReleaseOnCompletion> {
    inner: S,
    admission: Admission<C>,
    read: R,
    _release: PhantomData<fn() -> M>,
}

impl<S, C: Clock, R, M> ClassifiedLimit<S, C, R, M> {
    /// Admits each request to `inner` through `admission`, as `read` says.
    pub fn new(inner: S, admission: Admission<C>, read: R) -> Self {
        Self {
            inner,
            admission,
            read,
            _release: PhantomData,
        }
    }

    /// The admission limit (for stats, `set_limit` or `close`).
    pub fn admission(&self) -> &Admission<C> {
        &self.admission
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

impl<S, C, R, M, Request> Service<Request> for ClassifiedLimit<S, C, R, M>
where
    S: Service<Request> + Clone,
    S::Error: Into<BoxError>,
    C: Clock,
    R: ReadCall<Request>,
    M: Release<S::Response>,
{
    type Response = M::Output;
    type Error = BoxError;
    type Future = ResponseFuture<S, Request, C, M>;

    /// Always ready: capacity is decided per request, in the response future.
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let call = self.read.read_call(&request);
        // The common case first: a call without a key admitted at once, on
        // the lock-free path (no rate limit to check).
        if call.key().is_none() {
            if let Some(permit) = self.admission.try_admit_as(call.criticality()) {
                return ResponseFuture::admitted(permit, self.inner.clone(), request);
            }
        }
        // Decided now (counted, queued in arrival order); a wait is polled,
        // and its timer armed, by the response future.
        let decision = self.admission.decide(call, None);
        ResponseFuture::new(decision, self.inner.clone(), request)
    }
}

impl<S: Clone, C: Clock, R: Clone, M> Clone for ClassifiedLimit<S, C, R, M> {
    fn clone(&self) -> Self {
        Self::new(
            self.inner.clone(),
            self.admission.clone(),
            self.read.clone(),
        )
    }
}

impl<S: fmt::Debug, C: Clock + fmt::Debug, R, M> fmt::Debug for ClassifiedLimit<S, C, R, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClassifiedLimit")
            .field("inner", &self.inner)
            .field("admission", &self.admission)
            .finish_non_exhaustive()
    }
}
