#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
#![allow(dead_code)]
//! Deterministic helpers shared by the integration tests: wakers that count
//! their wake-ups, one-shot polling helpers, and an inner service whose
//! responses complete only when the test says so.

use edgeshed::error::BoxError;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Wake, Waker};
use tower_service::Service;

/// Counts how many times its waker was woken.
#[derive(Debug, Default)]
struct WakeCount(AtomicUsize);

impl Wake for WakeCount {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A waker that counts its wake-ups; clones of the `CountingWaker` share the count.
#[derive(Clone, Debug)]
pub struct CountingWaker {
    count: Arc<WakeCount>,
    waker: Waker,
}

impl Default for CountingWaker {
    fn default() -> Self {
        Self::new()
    }
}

impl CountingWaker {
    pub fn new() -> Self {
        let count = Arc::new(WakeCount::default());
        let waker = Waker::from(Arc::clone(&count));
        Self { count, waker }
    }

    pub fn waker(&self) -> &Waker {
        &self.waker
    }

    /// How many times the waker was woken so far.
    pub fn count(&self) -> usize {
        self.count.0.load(Ordering::SeqCst)
    }

    /// Polls `future` once with this waker.
    pub fn poll<F: Future + Unpin>(&self, future: &mut F) -> Poll<F::Output> {
        Pin::new(future).poll(&mut Context::from_waker(&self.waker))
    }

    /// Polls a pinned `future` once with this waker.
    pub fn poll_pin<F: Future + ?Sized>(&self, future: Pin<&mut F>) -> Poll<F::Output> {
        future.poll(&mut Context::from_waker(&self.waker))
    }

    /// Calls `poll_ready` once with this waker.
    pub fn poll_ready<S: Service<R>, R>(&self, service: &mut S) -> Poll<Result<(), S::Error>> {
        service.poll_ready(&mut Context::from_waker(&self.waker))
    }
}

/// Polls `future` once with a waker that does nothing.
pub fn poll_once<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    Pin::new(future).poll(&mut Context::from_waker(&futures::task::noop_waker()))
}

/// Calls `poll_ready` once with a waker that does nothing.
pub fn poll_ready<S: Service<R>, R>(service: &mut S) -> Poll<Result<(), S::Error>> {
    service.poll_ready(&mut Context::from_waker(&futures::task::noop_waker()))
}

/// `poll_ready` must be `Ready(Ok(()))` right now.
#[track_caller]
pub fn assert_ready<S: Service<R>, R>(service: &mut S)
where
    S::Error: std::fmt::Debug,
{
    match poll_ready(service) {
        Poll::Ready(Ok(())) => {}
        other => panic!("expected Ready(Ok(())), got {other:?}"),
    }
}

/// `poll_ready` must be `Pending` right now.
#[track_caller]
pub fn assert_pending<S: Service<R>, R>(service: &mut S)
where
    S::Error: std::fmt::Debug,
{
    match poll_ready(service) {
        Poll::Pending => {}
        other => panic!("expected Pending, got {other:?}"),
    }
}

/// Polls a response future once and expects it to be finished.
#[track_caller]
pub fn expect_done<F: Future + Unpin>(future: &mut F) -> F::Output {
    match poll_once(future) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("expected the future to be ready"),
    }
}

/// The error must be (a box of) `T`; returns it.
#[track_caller]
pub fn downcast<T: std::error::Error + Copy + 'static>(error: &BoxError) -> T {
    match error.downcast_ref::<T>() {
        Some(inner) => *inner,
        None => panic!(
            "expected a {}, got {error:?} ({error})",
            std::any::type_name::<T>()
        ),
    }
}

/// What `Origin::poll_ready` answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Readiness {
    Ready,
    Pending,
    Fail,
}

/// An inner service whose responses complete only when the test says so.
///
/// A request is a `u32` id; `complete(id)` makes its response `Ok(id)`,
/// `fail(id, msg)` makes it `Err(msg)`. It also counts how many response
/// futures are alive (`running`) and the peak of that count.
#[derive(Clone, Debug, Default)]
pub struct Origin {
    shared: Arc<Mutex<OriginState>>,
}

#[derive(Debug)]
struct OriginState {
    slots: HashMap<u32, Slot>,
    running: usize,
    max_running: usize,
    calls: Vec<u32>,
    readiness: Readiness,
    ready_wakers: Vec<Waker>,
}

impl Default for OriginState {
    fn default() -> Self {
        Self {
            slots: HashMap::new(),
            running: 0,
            max_running: 0,
            calls: Vec::new(),
            readiness: Readiness::Ready,
            ready_wakers: Vec::new(),
        }
    }
}

#[derive(Debug, Default)]
struct Slot {
    outcome: Option<Result<u32, &'static str>>,
    waker: Option<Waker>,
}

impl Origin {
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> MutexGuard<'_, OriginState> {
        self.shared.lock().unwrap()
    }

    fn settle(&self, id: u32, outcome: Result<u32, &'static str>) {
        let waker = {
            let mut state = self.state();
            let slot = state
                .slots
                .get_mut(&id)
                .unwrap_or_else(|| panic!("no running request {id}"));
            slot.outcome = Some(outcome);
            slot.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Lets request `id` answer `Ok(id)`.
    pub fn complete(&self, id: u32) {
        self.settle(id, Ok(id));
    }

    /// Lets request `id` answer `Err(message)`.
    pub fn fail(&self, id: u32, message: &'static str) {
        self.settle(id, Err(message));
    }

    /// Response futures alive right now.
    pub fn running(&self) -> usize {
        self.state().running
    }

    /// The largest number of response futures alive at once.
    pub fn max_running(&self) -> usize {
        self.state().max_running
    }

    /// Every request id the service was called with, in order.
    pub fn calls(&self) -> Vec<u32> {
        self.state().calls.clone()
    }

    /// Changes what `poll_ready` answers; wakes the tasks waiting for readiness.
    pub fn set_readiness(&self, readiness: Readiness) {
        let wakers = {
            let mut state = self.state();
            state.readiness = readiness;
            std::mem::take(&mut state.ready_wakers)
        };
        wakers.into_iter().for_each(Waker::wake);
    }
}

impl Service<u32> for Origin {
    type Response = u32;
    type Error = BoxError;
    type Future = OriginFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        let mut state = self.state();
        match state.readiness {
            Readiness::Ready => Poll::Ready(Ok(())),
            Readiness::Fail => Poll::Ready(Err("origin broken".into())),
            Readiness::Pending => {
                state.ready_wakers.push(cx.waker().clone());
                Poll::Pending
            }
        }
    }

    fn call(&mut self, id: u32) -> OriginFuture {
        let mut state = self.state();
        assert!(
            state.slots.insert(id, Slot::default()).is_none(),
            "request id {id} used twice"
        );
        state.running += 1;
        state.max_running = state.max_running.max(state.running);
        state.calls.push(id);
        OriginFuture {
            id,
            shared: Arc::clone(&self.shared),
            done: false,
        }
    }
}

/// Response future of [`Origin`].
#[derive(Debug)]
pub struct OriginFuture {
    id: u32,
    shared: Arc<Mutex<OriginState>>,
    done: bool,
}

impl Future for OriginFuture {
    type Output = Result<u32, BoxError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        assert!(!self.done, "OriginFuture polled after completion");
        let id = self.id;
        let mut state = self.shared.lock().unwrap();
        let slot = state.slots.get_mut(&id).unwrap();
        match slot.outcome.take() {
            Some(outcome) => {
                state.slots.remove(&id);
                state.running -= 1;
                drop(state);
                self.done = true;
                Poll::Ready(outcome.map_err(Into::into))
            }
            None => {
                slot.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

impl Drop for OriginFuture {
    fn drop(&mut self) {
        if !self.done {
            if let Ok(mut state) = self.shared.lock() {
                state.slots.remove(&self.id);
                state.running -= 1;
            }
        }
    }
}
