use super::future::ResponseFuture;
use super::stamp::{NoStamp, Stamp};
use crate::error::BoxError;
use crate::time::{Clock, Instant, RealClock};
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;
use tower_service::Service;

/// Enforces one deadline over the readiness wait and the call together.
///
/// ## When the budget starts
///
/// At the first `poll_ready` that finds the inner service **not ready** — the
/// request starts waiting for a permit — or, when the inner service was ready
/// at once, at `call`. So time spent queued for admission is part of the
/// budget (unlike tower's `Timeout`, which starts at `call`), but a service
/// that is polled ready ahead of any request (by tower's `ReadyCache` or a
/// balancer) and then sits idle spends nothing until its request arrives.
/// A readiness *wait* done ahead of the request still counts: the service
/// cannot tell it apart from a request's own wait.
///
/// ## Why `S: Clone`
///
/// When the deadline passes while the inner service is still not ready, the
/// pending readiness is withdrawn and the next `call` fails with
/// [`Expired`](crate::error::Expired). tower's protocol has no way to cancel
/// a pending `poll_ready` but to drop the service, so the inner service is
/// replaced with a fresh clone (a queued permit request leaves its queue
/// instead of capturing a permit nobody will use). Hence `S: Clone`: to wrap
/// a boxed service use tower's `BoxCloneService`, not `BoxService`.
///
/// A response still running at the deadline is dropped and fails with
/// [`Expired`](crate::error::Expired) too.
pub struct Deadline<S, C: Clock, F = NoStamp> {
    inner: S,
    clock: C,
    budget: Duration,
    stamp: F,
    entry: Option<Entry<C::Sleep>>,
}

/// The deadline of the request currently asking for readiness.
struct Entry<Sl> {
    at: Instant,
    timer: Option<Pin<Box<Sl>>>,
    expired: bool,
}

impl<S, C: RealClock> Deadline<S, C> {
    /// Gives each request `budget`, on `clock`, from when it first waits
    /// for readiness (or from `call`; see [`Deadline`]).
    ///
    /// `clock` must be a [`RealClock`]: with
    /// [`NoClock`](crate::time::NoClock) the deadline could never fire, and
    /// this does not compile.
    pub fn new(inner: S, budget: Duration, clock: C) -> Self {
        Self::with_stamp(inner, budget, clock, NoStamp)
    }
}

impl<S, C: RealClock, F> Deadline<S, C, F> {
    /// Like [`new`](Deadline::new), writing each deadline into its request with `stamp`.
    pub fn with_stamp(inner: S, budget: Duration, clock: C, stamp: F) -> Self {
        Self::build(inner, budget, clock, stamp)
    }
}

impl<S, C: Clock, F> Deadline<S, C, F> {
    /// The one constructor (public ones require a [`RealClock`]).
    fn build(inner: S, budget: Duration, clock: C, stamp: F) -> Self {
        Self {
            inner,
            clock,
            budget,
            stamp,
            entry: None,
        }
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

    fn entry(&mut self) -> &mut Entry<C::Sleep> {
        let (clock, budget) = (&self.clock, self.budget);
        self.entry.get_or_insert_with(|| Entry {
            at: clock.now() + budget,
            timer: None,
            expired: false,
        })
    }
}

impl<S, C, F, Request> Service<Request> for Deadline<S, C, F>
where
    S: Service<Request> + Clone,
    S::Error: Into<BoxError>,
    C: Clock,
    F: Stamp<Request>,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = ResponseFuture<S::Future, C>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        if self.entry.as_ref().is_some_and(|entry| entry.expired) {
            return Poll::Ready(Ok(()));
        }
        // Ready at once: no budget is spent yet (it starts at `call`), so a
        // `ReadyCache` or balancer that polls readiness ahead of requests
        // does not eat into it.
        if let Poll::Ready(ready) = self.inner.poll_ready(cx) {
            return Poll::Ready(ready.map_err(Into::into));
        }
        let clock = self.clock.clone();
        let entry = self.entry();
        let at = entry.at;
        let timer = entry
            .timer
            .get_or_insert_with(|| Box::pin(clock.sleep_until(at)));
        if timer.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        entry.expired = true;
        entry.timer = None;
        // Withdraw the inner service's pending readiness.
        self.inner = self.inner.clone();
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        let entry = self.entry.take();
        let (at, timer) = match entry {
            Some(entry) if entry.expired => return ResponseFuture::expired(),
            Some(entry) => (entry.at, entry.timer),
            None => (self.clock.now() + self.budget, None),
        };
        self.stamp.stamp(&mut request, at);
        ResponseFuture::running(self.inner.call(request), self.clock.clone(), at, timer)
    }
}

impl<S: Clone, C: Clock, F: Clone> Clone for Deadline<S, C, F> {
    /// A clone starts with no request in progress.
    fn clone(&self) -> Self {
        Self::build(
            self.inner.clone(),
            self.budget,
            self.clock.clone(),
            self.stamp.clone(),
        )
    }
}

impl<S: fmt::Debug, C: Clock, F> fmt::Debug for Deadline<S, C, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Deadline")
            .field("inner", &self.inner)
            .field("budget", &self.budget)
            .finish_non_exhaustive()
    }
}
