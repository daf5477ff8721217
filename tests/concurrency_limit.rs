#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! `ConcurrencyLimit`: parity with tower's limiter, minus its panics.

mod support;

use edgeshed::admission::Admission;
use edgeshed::error::{Closed, NotReady, OverloadCause, Overloaded};
use edgeshed::limit::{ConcurrencyLimit, ConcurrencyLimitLayer, GlobalConcurrencyLimitLayer};
use std::task::Poll;
use support::{
    assert_pending, assert_ready, downcast, expect_done, poll_once, CountingWaker, Origin,
    Readiness,
};
use tower_layer::Layer;
use tower_service::Service;

fn limited(max: usize) -> (Origin, ConcurrencyLimit<Origin>) {
    let origin = Origin::new();
    let service = ConcurrencyLimit::new(origin.clone(), max).unwrap();
    (origin, service)
}

#[test]
fn limits_in_flight_requests_and_frees_the_slot_on_completion() {
    let (origin, service) = limited(2);
    let mut first = service.clone();
    let mut second = service.clone();
    let mut third = service.clone();

    assert_ready(&mut first);
    let mut response1 = first.call(1);
    assert_ready(&mut second);
    let mut response2 = second.call(2);
    let waker = CountingWaker::new();
    assert!(waker.poll_ready(&mut third).is_pending());
    assert_eq!(service.admission().stats().in_flight, 2);
    assert_eq!(service.admission().stats().queued, 1);

    // The response is still running: the permit is still held.
    assert!(poll_once(&mut response1).is_pending());
    assert_eq!(waker.count(), 0);
    origin.complete(1);
    assert_eq!(expect_done(&mut response1).unwrap(), 1);
    assert_eq!(waker.count(), 1, "completing a response wakes the waiter");
    assert!(waker.poll_ready(&mut third).is_ready());
    let mut response3 = third.call(3);

    origin.complete(2);
    origin.complete(3);
    assert_eq!(expect_done(&mut response2).unwrap(), 2);
    assert_eq!(expect_done(&mut response3).unwrap(), 3);
    assert_eq!(origin.max_running(), 2);
    assert_eq!(service.admission().stats().in_flight, 0);
    assert_eq!(service.admission().semaphore().available_permits(), 2);
}

#[test]
fn call_without_poll_ready_is_a_not_ready_error_not_a_panic() {
    let (origin, mut service) = limited(1);
    let error = expect_done(&mut service.call(1)).unwrap_err();
    downcast::<NotReady>(&error);
    assert!(!error.is::<Overloaded>());
    assert!(origin.calls().is_empty(), "the inner service is not called");
    assert_eq!(service.admission().stats().in_flight, 0);

    // The service is still usable the right way.
    assert_ready(&mut service);
    let mut response = service.call(2);
    origin.complete(2);
    assert_eq!(expect_done(&mut response).unwrap(), 2);
}

#[test]
fn readiness_counts_for_one_call_only() {
    let (origin, mut service) = limited(5);
    assert_ready(&mut service);
    let _response = service.call(1);
    let error = expect_done(&mut service.call(2)).unwrap_err();
    downcast::<NotReady>(&error);
    assert_eq!(origin.calls(), [1]);
    assert_eq!(service.admission().stats().in_flight, 1);
}

#[test]
fn call_while_still_waiting_fails_but_keeps_the_place_in_the_queue() {
    let (origin, mut holder) = limited(1);
    assert_ready(&mut holder);
    let mut running = holder.call(1);
    let mut waiting = holder.clone();
    let waker = CountingWaker::new();
    assert!(waker.poll_ready(&mut waiting).is_pending());

    let error = expect_done(&mut waiting.call(2)).unwrap_err();
    downcast::<NotReady>(&error);
    assert_eq!(holder.admission().stats().queued, 1, "still queued");

    origin.complete(1);
    expect_done(&mut running).unwrap();
    assert_eq!(waker.count(), 1);
    assert!(waker.poll_ready(&mut waiting).is_ready());
    let mut response = waiting.call(3);
    origin.complete(3);
    assert_eq!(expect_done(&mut response).unwrap(), 3);
}

#[test]
fn a_limit_lowered_to_zero_stays_pending() {
    // A zero limit is refused at construction (tests/validation.rs); an
    // adaptive controller may still lower a running limit to zero.
    let (origin, mut service) = limited(1);
    service.admission().semaphore().set_limit(0);
    let waker = CountingWaker::new();
    for _ in 0..3 {
        assert!(waker.poll_ready(&mut service).is_pending());
    }
    assert_eq!(waker.count(), 0);
    let stats = service.admission().stats();
    assert_eq!((stats.in_flight, stats.queued, stats.limit), (0, 1, 0));
    assert!(origin.calls().is_empty());
}

#[test]
fn a_clone_that_reserved_capacity_blocks_others_until_its_response_completes() {
    let (origin, service) = limited(1);
    let mut reserving = service.clone();
    let mut other = service.clone();

    assert_ready(&mut reserving); // reserved, not called yet
    let waker = CountingWaker::new();
    assert!(waker.poll_ready(&mut other).is_pending());

    let mut response = reserving.call(1);
    assert!(
        waker.poll_ready(&mut other).is_pending(),
        "the call keeps the permit"
    );
    assert_eq!(waker.count(), 0);

    origin.complete(1);
    expect_done(&mut response).unwrap();
    assert_eq!(waker.count(), 1);
    assert!(waker.poll_ready(&mut other).is_ready());
}

#[test]
fn a_clone_starts_without_the_reservation_of_its_original() {
    let (_origin, mut service) = limited(1);
    assert_ready(&mut service);
    let mut clone = service.clone();
    assert_pending(&mut clone);
    let error = expect_done(&mut clone.call(1)).unwrap_err();
    downcast::<NotReady>(&error);
}

#[test]
fn dropping_a_service_that_holds_a_reservation_frees_it_and_wakes_the_next_waiter() {
    let (_origin, service) = limited(1);
    let mut reserving = service.clone();
    let mut waiting = service.clone();
    assert_ready(&mut reserving);
    let waker = CountingWaker::new();
    assert!(waker.poll_ready(&mut waiting).is_pending());

    drop(reserving);
    assert_eq!(waker.count(), 1);
    assert!(waker.poll_ready(&mut waiting).is_ready());
    assert_eq!(service.admission().stats().in_flight, 1);
}

#[test]
fn dropping_a_waiting_service_leaves_the_queue() {
    let (_origin, service) = limited(1);
    let mut holder = service.clone();
    assert_ready(&mut holder);
    let mut first = service.clone();
    let mut second = service.clone();
    let (first_waker, second_waker) = (CountingWaker::new(), CountingWaker::new());
    assert!(first_waker.poll_ready(&mut first).is_pending());
    assert!(second_waker.poll_ready(&mut second).is_pending());
    assert_eq!(service.admission().stats().queued, 2);

    drop(first);
    assert_eq!(service.admission().stats().queued, 1);
    drop(holder);
    assert_eq!(
        second_waker.count(),
        1,
        "the next live waiter gets the permit"
    );
    assert!(second_waker.poll_ready(&mut second).is_ready());
}

#[test]
fn a_service_dropped_after_its_permit_was_handed_over_passes_it_on() {
    let (_origin, service) = limited(1);
    let mut holder = service.clone();
    assert_ready(&mut holder);
    let mut first = service.clone();
    let mut second = service.clone();
    let (first_waker, second_waker) = (CountingWaker::new(), CountingWaker::new());
    assert!(first_waker.poll_ready(&mut first).is_pending());
    assert!(second_waker.poll_ready(&mut second).is_pending());

    drop(holder); // hands the permit to `first`
    assert_eq!((first_waker.count(), second_waker.count()), (1, 0));
    drop(first); // never picks it up
    assert_eq!(second_waker.count(), 1);
    assert!(second_waker.poll_ready(&mut second).is_ready());
    assert_eq!(service.admission().stats().in_flight, 1);
}

#[test]
fn an_inner_error_releases_the_permit() {
    let (origin, mut service) = limited(1);
    assert_ready(&mut service);
    let mut response = service.call(1);
    let mut waiting = service.clone();
    let waker = CountingWaker::new();
    assert!(waker.poll_ready(&mut waiting).is_pending());

    origin.fail(1, "boom");
    let error = expect_done(&mut response).unwrap_err();
    assert_eq!(error.to_string(), "boom");
    assert_eq!(waker.count(), 1);
    assert!(waker.poll_ready(&mut waiting).is_ready());
}

#[test]
fn dropping_an_unpolled_response_future_releases_the_permit() {
    let (origin, mut service) = limited(1);
    assert_ready(&mut service);
    let response = service.call(1);
    assert_eq!(origin.running(), 1);
    let mut waiting = service.clone();
    let waker = CountingWaker::new();
    assert!(waker.poll_ready(&mut waiting).is_pending());

    drop(response);
    assert_eq!(origin.running(), 0);
    assert_eq!(waker.count(), 1);
    assert!(waker.poll_ready(&mut waiting).is_ready());
}

#[test]
fn waiters_are_served_in_fifo_order_one_at_a_time() {
    let (origin, service) = limited(1);
    let mut holder = service.clone();
    assert_ready(&mut holder);
    let mut running = holder.call(0);

    let mut waiting: Vec<_> = (0..4)
        .map(|_| (service.clone(), CountingWaker::new()))
        .collect();
    for (svc, waker) in &mut waiting {
        assert!(waker.poll_ready(svc).is_pending());
    }
    let counts = |waiting: &[(ConcurrencyLimit<Origin>, CountingWaker)]| -> Vec<usize> {
        waiting.iter().map(|(_, waker)| waker.count()).collect()
    };

    let mut served = Vec::new();
    for next in 0..4u32 {
        origin.complete(next);
        expect_done(&mut running).unwrap();
        let expected: Vec<usize> = (0..4).map(|i| usize::from(i <= next)).collect();
        assert_eq!(counts(&waiting), expected, "after request {next} completed");
        // Later waiters stay pending even if polled.
        for (svc, waker) in waiting.iter_mut().skip(next as usize + 1) {
            assert!(waker.poll_ready(svc).is_pending());
        }
        let (svc, waker) = &mut waiting[next as usize];
        assert!(waker.poll_ready(svc).is_ready());
        running = svc.call(next + 1);
        served.push(next);
    }
    assert_eq!(served, [0, 1, 2, 3]);
    assert_eq!(origin.calls(), [0, 1, 2, 3, 4]);
    assert_eq!(origin.max_running(), 1);
}

#[test]
fn a_reserved_service_waits_for_the_inner_service_while_holding_its_permit() {
    let (origin, mut service) = limited(1);
    origin.set_readiness(Readiness::Pending);
    let waker = CountingWaker::new();
    assert!(waker.poll_ready(&mut service).is_pending());
    // tower parity: the permit is taken before the inner service is asked.
    assert_eq!(service.admission().stats().in_flight, 1);
    origin.set_readiness(Readiness::Ready);
    assert_eq!(waker.count(), 1);
    assert!(waker.poll_ready(&mut service).is_ready());
    assert_eq!(service.admission().stats().in_flight, 1);
}

#[test]
fn an_inner_readiness_error_is_returned_and_frees_the_reservation() {
    let (origin, mut service) = limited(1);
    origin.set_readiness(Readiness::Fail);
    match poll_once(&mut futures::future::poll_fn(|cx| service.poll_ready(cx))) {
        Poll::Ready(Err(error)) => assert_eq!(error.to_string(), "origin broken"),
        other => panic!("expected the inner error, got {other:?}"),
    }
    assert_eq!(service.admission().stats().in_flight, 0);
    assert_eq!(service.admission().semaphore().available_permits(), 1);
}

#[test]
fn hold_permit_in_response_keeps_the_permit_until_the_response_is_dropped() {
    let origin = Origin::new();
    let service = ConcurrencyLimitLayer::new(1)
        .unwrap()
        .hold_permit_in_response()
        .layer(origin.clone());
    let mut first = service.clone();
    assert_ready(&mut first);
    let mut response = first.call(7);
    origin.complete(7);
    let permitted = expect_done(&mut response).unwrap();
    assert_eq!(*permitted, 7, "derefs to the response");
    drop(response);

    // The future is done, but the permit travels in the response.
    assert_eq!(service.admission().stats().in_flight, 1);
    let mut waiting = service.clone();
    let waker = CountingWaker::new();
    assert!(waker.poll_ready(&mut waiting).is_pending());

    drop(permitted);
    assert_eq!(waker.count(), 1);
    assert!(waker.poll_ready(&mut waiting).is_ready());

    // into_parts moves the permit out; it is released when that part is dropped.
    let mut response = waiting.call(8);
    origin.complete(8);
    let (value, permit) = expect_done(&mut response).unwrap().into_parts();
    assert_eq!(value, 8);
    assert!(permit.is_some());
    assert_eq!(service.admission().stats().in_flight, 1);
    drop(permit);
    assert_eq!(service.admission().stats().in_flight, 0);

    // into_inner releases the permit at once.
    let mut third = service.clone();
    assert_ready(&mut third);
    let mut response = third.call(9);
    origin.complete(9);
    let permitted = expect_done(&mut response).unwrap();
    assert_eq!(service.admission().stats().in_flight, 1);
    assert_eq!(permitted.into_inner(), 9);
    assert_eq!(service.admission().stats().in_flight, 0);
}

#[test]
fn the_default_release_returns_the_permit_when_the_future_completes() {
    let origin = Origin::new();
    let mut service = ConcurrencyLimitLayer::new(1).unwrap().layer(origin.clone());
    assert_ready(&mut service);
    let mut response = service.call(1);
    origin.complete(1);
    let value: u32 = expect_done(&mut response).unwrap();
    assert_eq!(value, 1);
    assert_eq!(service.admission().stats().in_flight, 0);
}

#[test]
fn the_layer_and_its_clones_share_one_limit_across_the_services_they_wrap() {
    let layer = ConcurrencyLimitLayer::new(1).unwrap();
    let mut a = layer.layer(Origin::new());
    let mut b = layer.clone().layer(Origin::new());
    assert_ready(&mut a);
    assert_pending(&mut b);
    assert_eq!(layer.admission().stats().in_flight, 1);
    assert_eq!(layer.admission().stats().queued, 1);
    assert_eq!(b.admission().stats(), layer.admission().stats());
}

#[test]
fn a_per_service_layer_gives_each_service_its_own_limit() {
    let layer = ConcurrencyLimitLayer::new(1).unwrap().per_service();
    let mut a = layer.layer(Origin::new());
    let mut b = layer.layer(Origin::new());
    assert_ready(&mut a);
    assert_ready(&mut b);
    assert_eq!(a.admission().stats().in_flight, 1);
    assert_eq!(b.admission().stats().in_flight, 1);
}

#[test]
fn the_global_layer_shares_one_limit_across_different_services() {
    let admission = Admission::wait(1).unwrap();
    let layer = GlobalConcurrencyLimitLayer::new(admission.clone());
    let origin = Origin::new();
    let mut users = layer.layer(origin.clone());
    // A different service type behind the same limit.
    let mut echo = layer.layer(tower::service_fn(|x: u32| {
        std::future::ready(Ok::<_, std::convert::Infallible>(x))
    }));

    assert_ready(&mut users);
    let mut response = users.call(1);
    let waker = CountingWaker::new();
    assert!(waker.poll_ready(&mut echo).is_pending());
    assert_eq!(admission.stats().in_flight, 1);
    assert_eq!(admission.stats().queued, 1);
    assert_eq!(layer.admission().stats(), admission.stats());

    origin.complete(1);
    expect_done(&mut response).unwrap();
    assert_eq!(waker.count(), 1);
    assert!(waker.poll_ready(&mut echo).is_ready());
    let mut answer = echo.call(5);
    assert_eq!(expect_done(&mut answer).unwrap(), 5);
    assert_eq!(admission.stats().in_flight, 0);
    assert_eq!(admission.stats().admitted, 2);
}

#[test]
fn the_shed_policy_rejects_at_once_with_overloaded() {
    let origin = Origin::new();
    let service = ConcurrencyLimitLayer::shed(1)
        .unwrap()
        .layer(origin.clone());
    let mut holder = service.clone();
    assert_ready(&mut holder);
    let _running = holder.call(1);

    let mut rejected = service.clone();
    assert_ready(&mut rejected); // ready: the decision is made, no waiting
    let error = expect_done(&mut rejected.call(2)).unwrap_err();
    assert_eq!(downcast::<Overloaded>(&error).cause(), OverloadCause::Shed);
    assert_eq!(error.to_string(), "service overloaded");
    assert_eq!(
        origin.calls(),
        [1],
        "a shed request never reaches the inner service"
    );
    let stats = service.admission().stats();
    assert_eq!(
        (stats.in_flight, stats.queued, stats.admitted, stats.shed),
        (1, 0, 1, 1)
    );
}

#[test]
fn after_a_shed_call_the_service_asks_again() {
    let origin = Origin::new();
    let service = ConcurrencyLimitLayer::shed(1)
        .unwrap()
        .layer(origin.clone());
    let mut holder = service.clone();
    assert_ready(&mut holder);
    let mut running = holder.call(1);
    let mut other = service.clone();
    assert_ready(&mut other);
    assert!(expect_done(&mut other.call(2)).is_err());

    origin.complete(1);
    expect_done(&mut running).unwrap();
    assert_ready(&mut other);
    let mut response = other.call(3);
    origin.complete(3);
    assert_eq!(expect_done(&mut response).unwrap(), 3);
}

#[test]
fn a_closed_limit_fails_calls_with_closed() {
    let (origin, service) = limited(1);
    let mut waiting_holder = service.clone();
    assert_ready(&mut waiting_holder);
    let mut waiting = service.clone();
    let waker = CountingWaker::new();
    assert!(waker.poll_ready(&mut waiting).is_pending());

    service.admission().semaphore().close();
    assert_eq!(waker.count(), 1);
    assert!(waker.poll_ready(&mut waiting).is_ready());
    let error = expect_done(&mut waiting.call(1)).unwrap_err();
    downcast::<Closed>(&error);

    let mut later = service.clone();
    assert_ready(&mut later);
    downcast::<Closed>(&expect_done(&mut later.call(2)).unwrap_err());
    assert!(origin.calls().is_empty());

    // The reservation taken before closing still works.
    let mut response = waiting_holder.call(3);
    origin.complete(3);
    assert_eq!(expect_done(&mut response).unwrap(), 3);
}

#[test]
fn accessors_reach_the_inner_service() {
    let (origin, mut service) = limited(1);
    origin.set_readiness(Readiness::Pending);
    service.get_mut().set_readiness(Readiness::Ready);
    assert!(service.get_ref().calls().is_empty());
    assert_ready(&mut service);
    assert_eq!(service.admission().stats().in_flight, 1);
    let admission = service.admission().clone();
    let inner = service.into_inner(); // drops the reservation
    assert!(inner.calls().is_empty());
    assert_eq!(admission.stats().in_flight, 0);
}

#[test]
fn polling_a_completed_response_again_is_an_error_not_a_panic() {
    // lib.rs promises: "Misuse — `call` without readiness, polling a finished
    // future — yields an error (NotReady) instead" of a panic.
    let echo = tower::service_fn(|x: u32| std::future::ready(Ok::<_, std::convert::Infallible>(x)));
    let mut service = ConcurrencyLimit::new(echo, 1).unwrap();
    assert_ready(&mut service);
    let mut response = service.call(1);
    assert_eq!(expect_done(&mut response).unwrap(), 1);
    let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        poll_once(&mut response).map(|outcome| outcome.map_err(|error| error.to_string()))
    }));
    let again = again.expect("polling a finished response future must not panic");
    assert_eq!(again, Poll::Ready(Err(NotReady::new().to_string())));
}
