// Native only: tower is a host dev-dependency.
#![cfg(not(target_arch = "wasm32"))]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! `LoadShed` over edgeshed's own `ConcurrencyLimit` rejects through the
//! readiness probe: nothing is queued, nothing is cloned. Anything else (a
//! limit behind a wrapper with state, a foreign service) still gets the
//! withdrawing clone, and the limit's own answers (closed, a full bounded
//! queue) are unchanged.

mod support;

use edgeshed::admission::Admission;
use edgeshed::error::{Closed, Overloaded};
use edgeshed::limit::{ConcurrencyLimit, ConcurrencyLimitLayer};
use edgeshed::load_shed::LoadShed;
use edgeshed::time::ManualClock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use support::{assert_ready, downcast, expect_done, CountingWaker, Origin};
use tower_layer::Layer;
use tower_service::Service;

/// A service that counts how often it (or a clone) was cloned.
#[derive(Debug)]
struct Counted<S> {
    inner: S,
    clones: Arc<AtomicUsize>,
}

impl<S> Counted<S> {
    fn new(inner: S) -> (Self, Arc<AtomicUsize>) {
        let clones = Arc::new(AtomicUsize::new(0));
        let counted = Self {
            inner,
            clones: Arc::clone(&clones),
        };
        (counted, clones)
    }
}

impl<S: Clone> Clone for Counted<S> {
    fn clone(&self) -> Self {
        self.clones.fetch_add(1, Ordering::Relaxed);
        Self {
            inner: self.inner.clone(),
            clones: Arc::clone(&self.clones),
        }
    }
}

impl<S: Service<R>, R> Service<R> for Counted<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: R) -> S::Future {
        self.inner.call(request)
    }
}

/// Takes the only permit of `limit` in a clone that keeps it.
fn hold<S: Service<u32> + Clone>(limit: &S) -> (S, S::Future)
where
    S::Error: std::fmt::Debug,
{
    let mut holder = limit.clone();
    assert_ready(&mut holder);
    let running = holder.call(0);
    (holder, running)
}

#[test]
fn over_a_full_limit_nothing_is_queued_and_nothing_is_cloned() {
    let origin = Origin::new();
    let (counted, clones) = Counted::new(origin.clone());
    let limit = ConcurrencyLimit::new(counted, 1).unwrap();
    let admission = limit.admission().clone();
    let (_holder, mut running) = hold(&limit);
    let cloned_before = clones.load(Ordering::Relaxed);

    let mut service = LoadShed::new(limit);
    let waker = CountingWaker::new();
    for id in 1..=100 {
        assert!(waker.poll_ready(&mut service).is_ready());
        downcast::<Overloaded>(&expect_done(&mut service.call(id)).unwrap_err());
    }
    assert_eq!(service.shed_count(), 100);
    assert_eq!(
        clones.load(Ordering::Relaxed),
        cloned_before,
        "the probed path clones nothing"
    );
    // No waiter was ever pushed: the queue's storage was never allocated.
    assert_eq!(admission.semaphore().queue_capacity(), 0);
    assert_eq!(admission.stats().queued, 0);

    // Capacity back: the same instance is served, and nobody was woken.
    origin.complete(0);
    expect_done(&mut running).unwrap();
    assert_ready(&mut service);
    let mut response = service.call(101);
    origin.complete(101);
    assert_eq!(expect_done(&mut response).unwrap(), 101);
    assert_eq!(waker.count(), 0);
}

#[test]
fn the_probe_ends_with_the_poll_a_direct_poll_of_the_same_limit_queues() {
    let origin = Origin::new();
    let limit = ConcurrencyLimit::new(origin.clone(), 1).unwrap();
    let admission = limit.admission().clone();

    // Asked, not answered: the limit had a permit.
    let mut service = LoadShed::new(limit);
    assert_ready(&mut service);
    let mut running = service.call(1);

    // The very limit the probe was asked of, polled directly (same address):
    // it must queue as usual and be woken when the permit comes back.
    let waker = CountingWaker::new();
    assert!(waker.poll_ready(service.get_mut()).is_pending());
    assert_eq!(admission.stats().queued, 1);
    origin.complete(1);
    expect_done(&mut running).unwrap();
    assert_eq!(waker.count(), 1);
    assert!(waker.poll_ready(service.get_mut()).is_ready());
}

#[test]
fn a_limit_behind_a_stateful_wrapper_is_withdrawn_by_the_clone() {
    let origin = Origin::new();
    let limit = ConcurrencyLimit::new(origin.clone(), 1).unwrap();
    let admission = limit.admission().clone();
    let (_holder, _running) = hold(&limit);
    // `Counted` has state of its own (its counter) around the limit: the
    // limit may sit at the same address, but it is not the same size.
    let (counted, clones) = Counted::new(limit);

    let mut service = LoadShed::new(counted);
    assert_ready(&mut service);
    downcast::<Overloaded>(&expect_done(&mut service.call(1)).unwrap_err());
    assert_eq!(clones.load(Ordering::Relaxed), 1, "the fallback clones");
    assert_eq!(admission.stats().queued, 0, "and leaves no waiter");
}

#[test]
fn a_closed_limit_still_answers_closed() {
    let limit = ConcurrencyLimit::new(Origin::new(), 1).unwrap();
    let (_holder, _running) = hold(&limit);
    limit.admission().semaphore().close();
    let mut service = LoadShed::new(limit);
    assert_ready(&mut service);
    downcast::<Closed>(&expect_done(&mut service.call(1)).unwrap_err());
    assert_eq!(service.shed_count(), 0);
}

#[test]
fn a_full_bounded_queue_still_rejects_in_the_limit() {
    let clock = ManualClock::new();
    let admission = Admission::new(
        1,
        edgeshed::admission::Policy::Queue {
            max_queue: 1,
            timeout: Duration::from_millis(20),
        },
        clock.clone(),
    )
    .unwrap();
    let limit: ConcurrencyLimit<_, _> =
        ConcurrencyLimit::with_admission(Origin::new(), admission.clone());
    let (_holder, _running) = hold(&limit);
    // Someone else fills the one queue place.
    let mut queued = limit.clone();
    let waker = CountingWaker::new();
    assert!(waker.poll_ready(&mut queued).is_pending());

    let mut service = LoadShed::new(limit);
    assert_ready(&mut service);
    downcast::<Overloaded>(&expect_done(&mut service.call(1)).unwrap_err());
    // As before the probe: the limit itself shed it, and counted it.
    assert_eq!(service.shed_count(), 0);
    assert_eq!(admission.stats().shed, 1);
    assert_eq!(admission.stats().queued, 1);
}

#[test]
fn over_a_queue_with_room_nothing_is_queued_and_no_timer_armed() {
    let clock = ManualClock::new();
    let limit = ConcurrencyLimitLayer::new(1)
        .unwrap()
        .queue(4, Duration::from_millis(20))
        .unwrap()
        .clock(clock.clone())
        .layer(Origin::new());
    let admission = limit.admission().clone();
    let (_holder, _running) = hold(&limit);
    let mut service = LoadShed::new(limit);
    for id in 1..=10 {
        assert_ready(&mut service);
        downcast::<Overloaded>(&expect_done(&mut service.call(id)).unwrap_err());
    }
    assert_eq!(service.shed_count(), 10);
    assert_eq!(admission.semaphore().queue_capacity(), 0);
    assert_eq!(clock.armed_timers(), 0);
}
