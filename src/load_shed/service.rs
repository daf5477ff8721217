use super::counter::ShedCounter;
use super::future::ResponseFuture;
use super::probe;
use crate::error::BoxError;
use core::task::{Context, Poll};
use tower_service::Service;

/// Rejects requests with [`Overloaded`](crate::error::Overloaded) whenever
/// the inner service is not ready, instead of waiting for it, and counts
/// the rejections ([`shed_count`](Self::shed_count)).
///
/// ```
/// use edgeshed::load_shed::LoadShed;
/// use tower_service::Service;
/// use std::future::poll_fn;
/// use std::task::Poll;
/// # futures::executor::block_on(async {
/// // An inner service that is never ready (a full buffer, an empty rate window, ...).
/// #[derive(Clone)]
/// struct Busy;
/// impl Service<u32> for Busy {
///     type Response = u32;
///     type Error = std::convert::Infallible;
///     type Future = std::future::Ready<Result<u32, Self::Error>>;
///     fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> Poll<Result<(), Self::Error>> {
///         Poll::Pending
///     }
///     fn call(&mut self, x: u32) -> Self::Future {
///         std::future::ready(Ok(x))
///     }
/// }
/// let mut svc = LoadShed::new(Busy);
/// poll_fn(|cx| svc.poll_ready(cx)).await.unwrap(); // ready: the decision is made
/// let error = svc.call(1).await.unwrap_err();
/// assert!(error.is::<edgeshed::error::Overloaded>());
/// assert_eq!(svc.shed_count(), 1);
/// # });
/// ```
///
/// ## Why `S: Clone`
///
/// When the inner service is not ready, its `poll_ready` may have parked
/// something: a place in a semaphore's queue, a reserved buffer slot. tower's
/// protocol has no way to withdraw a pending readiness but to drop the
/// service, so `LoadShed` replaces the inner service with a fresh clone
/// (clones share the limit, never a reservation). Without that, the parked
/// waiter would capture the next released permit while this instance sits
/// idle. A `BoxService` is not `Clone`: box with tower's `BoxCloneService`
/// (or `BoxCloneSyncService`) instead, or put a `Buffer` in front.
///
/// edgeshed's own [`ConcurrencyLimit`](crate::limit::ConcurrencyLimit) right
/// inside a `LoadShed` is never cloned: `LoadShed` asks it for a readiness
/// probe, and the limit answers "not ready" with nothing queued (no waiter,
/// no timer, no clone). Any other inner service, or a limit nested deeper
/// behind a wrapper with state of its own, gets the clone.
#[derive(Debug)]
pub struct LoadShed<S> {
    inner: S,
    inner_ready: bool,
    counter: ShedCounter,
}

impl<S> LoadShed<S> {
    /// Sheds load in front of `inner`, with a count of its own.
    pub fn new(inner: S) -> Self {
        Self::with_counter(inner, ShedCounter::new())
    }

    /// Sheds load in front of `inner`, counting into `counter` (for example
    /// [`ShedCounter::in_admission`]).
    pub fn with_counter(inner: S, counter: ShedCounter) -> Self {
        Self {
            inner,
            inner_ready: false,
            counter,
        }
    }

    /// The requests rejected so far by this service and its clones (or the
    /// whole count of the admission it counts into).
    pub fn shed_count(&self) -> u64 {
        self.counter.get()
    }

    /// The counter this service and its clones share.
    pub fn counter(&self) -> &ShedCounter {
        &self.counter
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

impl<S: Clone> LoadShed<S> {
    /// Drops whatever a pending readiness parked, by replacing the inner
    /// service with a fresh clone. Out of line: the probed path never runs it.
    #[cold]
    #[inline(never)]
    fn withdraw(&mut self) {
        self.inner = self.inner.clone();
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
        let (readiness, nothing_parked) = probe::ask(&mut self.inner, |inner| inner.poll_ready(cx));
        match readiness {
            Poll::Ready(Ok(())) => self.inner_ready = true,
            Poll::Ready(Err(error)) => return Poll::Ready(Err(error.into())),
            Poll::Pending => {
                // Withdraw the pending readiness (e.g. a queued semaphore
                // waiter) so that this instance holds nothing while the
                // request it would have served is rejected — unless the
                // inner service answered the probe: then nothing is parked.
                if !nothing_parked {
                    self.withdraw();
                }
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
            self.counter.add_one();
            ResponseFuture::overloaded()
        }
    }
}

impl<S: Clone> Clone for LoadShed<S> {
    /// A clone starts not ready, like any fresh service, and shares the counter.
    fn clone(&self) -> Self {
        Self::with_counter(self.inner.clone(), self.counter.clone())
    }
}
