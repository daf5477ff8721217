#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! `LoadShed`: reject instead of waiting — and never leave a parked waiter behind.

mod support;

use edgeshed::error::{OverloadCause, Overloaded};
use edgeshed::limit::{ConcurrencyLimit, ConcurrencyLimitLayer};
use edgeshed::load_shed::{LoadShed, LoadShedLayer};
use edgeshed::time::ManualClock;
use std::task::Poll;
use std::time::Duration;
use support::{assert_ready, downcast, expect_done, poll_once, CountingWaker, Origin, Readiness};
use tower_layer::Layer;
use tower_service::Service;

#[test]
fn passes_requests_through_when_the_inner_service_is_ready() {
    let origin = Origin::new();
    let mut service = LoadShed::new(origin.clone());
    assert_ready(&mut service);
    let mut response = service.call(1);
    assert!(poll_once(&mut response).is_pending());
    origin.complete(1);
    assert_eq!(expect_done(&mut response).unwrap(), 1);
    assert_eq!(origin.calls(), [1]);
}

#[test]
fn inner_errors_pass_through_as_they_are() {
    let origin = Origin::new();
    let mut service = LoadShed::new(origin.clone());
    assert_ready(&mut service);
    let mut response = service.call(1);
    origin.fail(1, "boom");
    let error = expect_done(&mut response).unwrap_err();
    assert!(!error.is::<Overloaded>());
    assert_eq!(error.to_string(), "boom");
}

#[test]
fn answers_overloaded_when_the_inner_service_is_not_ready() {
    let origin = Origin::new();
    origin.set_readiness(Readiness::Pending);
    let mut service = LoadShedLayer::new().layer(origin.clone());
    // Always ready: the point is not to wait.
    assert_ready(&mut service);
    let error = expect_done(&mut service.call(1)).unwrap_err();
    assert_eq!(downcast::<Overloaded>(&error).cause(), OverloadCause::Shed);
    assert_eq!(error.to_string(), "service overloaded");
    assert!(origin.calls().is_empty());

    origin.set_readiness(Readiness::Ready);
    assert_ready(&mut service);
    let mut response = service.call(2);
    origin.complete(2);
    assert_eq!(expect_done(&mut response).unwrap(), 2);
}

#[test]
fn call_without_poll_ready_is_overloaded() {
    let origin = Origin::new();
    let mut service = LoadShed::new(origin.clone());
    let error = expect_done(&mut service.call(1)).unwrap_err();
    downcast::<Overloaded>(&error);
    assert!(origin.calls().is_empty());
}

#[test]
fn readiness_counts_for_one_call_only() {
    let origin = Origin::new();
    let mut service = LoadShed::new(origin.clone());
    assert_ready(&mut service);
    let _first = service.call(1);
    let error = expect_done(&mut service.call(2)).unwrap_err();
    downcast::<Overloaded>(&error);
    assert_eq!(origin.calls(), [1]);
}

#[test]
fn a_clone_starts_not_ready() {
    let origin = Origin::new();
    let mut service = LoadShed::new(origin.clone());
    assert_ready(&mut service);
    let mut clone = service.clone();
    downcast::<Overloaded>(&expect_done(&mut clone.call(1)).unwrap_err());
    // The original is still ready.
    let mut response = service.call(2);
    origin.complete(2);
    assert_eq!(expect_done(&mut response).unwrap(), 2);
}

#[test]
fn an_inner_readiness_error_is_returned_from_poll_ready() {
    let origin = Origin::new();
    origin.set_readiness(Readiness::Fail);
    let mut service = LoadShed::new(origin);
    match poll_once(&mut futures::future::poll_fn(|cx| service.poll_ready(cx))) {
        Poll::Ready(Err(error)) => {
            assert_eq!(error.to_string(), "origin broken");
            assert!(!error.is::<Overloaded>());
        }
        other => panic!("expected the inner error, got {other:?}"),
    }
}

#[test]
fn sheds_over_a_saturated_limit_without_queueing() {
    let origin = Origin::new();
    let limit = ConcurrencyLimit::new(origin.clone(), 1).unwrap();
    let admission = limit.admission().clone();
    let mut holder = limit.clone();
    assert_ready(&mut holder);
    let mut running = holder.call(1);

    let mut service = LoadShed::new(limit);
    assert_ready(&mut service);
    downcast::<Overloaded>(&expect_done(&mut service.call(2)).unwrap_err());
    assert_eq!(admission.stats().queued, 0);

    origin.complete(1);
    expect_done(&mut running).unwrap();
    // The same instance is admitted once capacity is back.
    assert_ready(&mut service);
    let mut response = service.call(3);
    origin.complete(3);
    assert_eq!(expect_done(&mut response).unwrap(), 3);
    assert_eq!(origin.calls(), [1, 3]);
}

#[test]
fn over_a_queue_policy_a_rejected_request_leaves_no_waiter_or_timer() {
    let clock = ManualClock::new();
    let origin = Origin::new();
    let limit = ConcurrencyLimitLayer::new(1)
        .unwrap()
        .queue(4, Duration::from_millis(20))
        .unwrap()
        .clock(clock.clone())
        .layer(origin.clone());
    let admission = limit.admission().clone();
    let mut holder = limit.clone();
    assert_ready(&mut holder);
    let _running = holder.call(1);

    let mut service = LoadShed::new(limit);
    assert_ready(&mut service);
    downcast::<Overloaded>(&expect_done(&mut service.call(2)).unwrap_err());
    assert_eq!(admission.stats().queued, 0);
    assert_eq!(clock.armed_timers(), 0);
}

/// The "parked waiter" pitfall of tower 0.5 (seed 001, "空闲时也报").
///
/// In tower, `LoadShed::poll_ready` records the inner `Pending` and returns
/// `Ready`, but leaves the inner `ConcurrencyLimit` holding its pending
/// semaphore acquire. That acquire sits in the semaphore queue; when a permit
/// is released it is assigned to it, although its owner (A) was already
/// rejected and is idle. Every other instance (B) is then rejected even
/// though nothing is in flight, until A happens to be polled or dropped.
///
/// edgeshed's `LoadShed` withdraws the pending readiness, so A neither holds
/// nor captures capacity. The same scenario with tower's own types is in
/// `tower_load_shed_over_concurrency_limit_parks_a_waiter` below, which shows
/// that this setup detects the bug.
#[test]
fn a_rejected_idle_instance_never_captures_a_released_permit() {
    let origin = Origin::new();
    let limit = ConcurrencyLimit::new(origin.clone(), 1).unwrap();
    let admission = limit.admission().clone();

    // A third request holds the only permit.
    let mut third = limit.clone();
    assert_ready(&mut third);
    let mut held = third.call(1);

    let mut a = LoadShed::new(limit.clone());
    let mut b = LoadShed::new(limit);

    // A is rejected...
    let a_waker = CountingWaker::new();
    assert!(a_waker.poll_ready(&mut a).is_ready());
    downcast::<Overloaded>(&expect_done(&mut a.call(2)).unwrap_err());
    // ...and then left idle: kept alive, never polled again.
    let stats = admission.stats();
    assert_eq!(
        (stats.in_flight, stats.queued),
        (1, 0),
        "A must not stay queued"
    );

    // The held permit comes back.
    origin.complete(1);
    expect_done(&mut held).unwrap();
    let stats = admission.stats();
    assert_eq!(
        (stats.in_flight, stats.queued),
        (0, 0),
        "the permit must go back to the pool, not to the idle rejected A"
    );
    assert_eq!(admission.semaphore().available_permits(), 1);
    assert_eq!(a_waker.count(), 0, "A was not handed anything");

    // B gets it.
    assert_ready(&mut b);
    let mut response = b.call(3);
    assert_eq!(admission.stats().in_flight, 1);
    origin.complete(3);
    assert_eq!(expect_done(&mut response).unwrap(), 3);
    assert_eq!(origin.calls(), [1, 3]);
    drop(a);
    assert_eq!(admission.stats().in_flight, 0);
}

/// The same scenario with tower 0.5's `LoadShed` over tower's
/// `ConcurrencyLimit`: B is rejected although nothing is in flight, because
/// the idle A captured the released permit. This asserts tower's buggy
/// behaviour, proving the scenario above can tell the difference.
#[test]
fn tower_load_shed_over_concurrency_limit_parks_a_waiter() {
    use tower::load_shed::error::Overloaded as TowerOverloaded;

    let origin = Origin::new();
    let limit = tower::limit::ConcurrencyLimit::new(origin.clone(), 1);

    let mut third = limit.clone();
    assert_ready(&mut third);
    let mut held = third.call(1);

    let mut a = tower::load_shed::LoadShed::new(limit.clone());
    let mut b = tower::load_shed::LoadShed::new(limit);

    let a_waker = CountingWaker::new();
    assert!(a_waker.poll_ready(&mut a).is_ready());
    let error = expect_done(&mut a.call(2)).unwrap_err();
    assert!(error.is::<TowerOverloaded>());

    origin.complete(1);
    expect_done(&mut held).unwrap();
    drop(held); // tower's response future keeps its permit until dropped
                // tower hands the permit to A's parked acquire and wakes A, which is idle.
    assert_eq!(a_waker.count(), 1);

    // Nothing is in flight, yet B is rejected: A holds the permit.
    assert_ready(&mut b);
    let error = expect_done(&mut b.call(3)).unwrap_err();
    assert!(error.is::<TowerOverloaded>(), "tower rejects B: {error}");
    assert_eq!(origin.calls(), [1]);
    assert_eq!(origin.running(), 0);

    // Only dropping A frees it.
    drop(a);
    assert_ready(&mut b);
    let mut response = b.call(4);
    origin.complete(4);
    assert_eq!(expect_done(&mut response).unwrap(), 4);
}

#[test]
fn a_rejected_instance_that_polls_again_is_served_in_turn() {
    let origin = Origin::new();
    let limit = ConcurrencyLimit::new(origin.clone(), 1).unwrap();
    let admission = limit.admission().clone();
    let mut holder = limit.clone();
    assert_ready(&mut holder);
    let mut running = holder.call(1);

    let mut a = LoadShed::new(limit);
    for id in 2..5 {
        assert_ready(&mut a);
        downcast::<Overloaded>(&expect_done(&mut a.call(id)).unwrap_err());
        assert_eq!(admission.stats().queued, 0);
    }
    origin.complete(1);
    expect_done(&mut running).unwrap();
    assert_ready(&mut a);
    let mut response = a.call(5);
    origin.complete(5);
    assert_eq!(expect_done(&mut response).unwrap(), 5);
}

#[test]
fn a_reservation_withdrawn_while_the_inner_service_is_pending_is_released() {
    // ConcurrencyLimit reserves its permit, then waits for the inner service:
    // LoadShed rejects and must not leave that reservation behind.
    let origin = Origin::new();
    origin.set_readiness(Readiness::Pending);
    let limit = ConcurrencyLimit::new(origin.clone(), 1).unwrap();
    let admission = limit.admission().clone();
    let mut service = LoadShed::new(limit);
    assert_ready(&mut service);
    downcast::<Overloaded>(&expect_done(&mut service.call(1)).unwrap_err());
    assert_eq!(admission.stats().in_flight, 0);
    assert_eq!(admission.semaphore().available_permits(), 1);
}

#[test]
fn accessors_reach_the_inner_service() {
    let origin = Origin::new();
    let mut service = LoadShed::new(origin.clone());
    service.get_mut().set_readiness(Readiness::Pending);
    assert!(service.get_ref().calls().is_empty());
    assert_ready(&mut service);
    downcast::<Overloaded>(&expect_done(&mut service.call(1)).unwrap_err());
    let inner = service.into_inner();
    inner.set_readiness(Readiness::Ready);
    assert!(origin.calls().is_empty());
}

#[test]
fn polling_a_completed_response_again_is_an_error_not_a_panic() {
    let echo = tower::service_fn(|x: u32| std::future::ready(Ok::<_, std::convert::Infallible>(x)));
    let mut service = LoadShed::new(echo);
    assert_ready(&mut service);
    let mut response = service.call(1);
    assert_eq!(expect_done(&mut response).unwrap(), 1);
    let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        poll_once(&mut response).map(|outcome| outcome.is_err())
    }));
    let again = again.expect("polling a finished response future must not panic");
    assert_eq!(again, Poll::Ready(true));
}
