#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! `Deadline`: one budget for the readiness wait and the call together.

mod support;

use edgeshed::deadline::{Deadline, DeadlineLayer};
use edgeshed::error::{Expired, NotReady, Overloaded};
use edgeshed::limit::ConcurrencyLimit;
use edgeshed::time::{Clock, Instant, ManualClock};
use std::convert::Infallible;
use std::future::Ready;
use std::task::Poll;
use std::time::Duration;
use support::{assert_ready, downcast, expect_done, poll_once, CountingWaker, Origin, Readiness};
use tower_layer::Layer;
use tower_service::Service;

const MS: Duration = Duration::from_millis(1);
const BUDGET: Duration = Duration::from_millis(250);

/// A request that carries its absolute deadline, as a downstream call would.
#[derive(Debug, Default)]
struct Request {
    deadline: Option<Instant>,
}

fn stamp(request: &mut Request, at: Instant) {
    request.deadline = Some(at);
}

type EchoFn = fn(Request) -> Ready<Result<Option<Instant>, Infallible>>;

/// Answers with the deadline stamped into the request.
fn echo_deadline() -> tower::util::ServiceFn<EchoFn> {
    tower::service_fn(|request: Request| std::future::ready(Ok(request.deadline)))
}

#[test]
fn time_spent_waiting_for_a_permit_is_taken_from_the_call() {
    let clock = ManualClock::new();
    let origin = Origin::new();
    let limit = ConcurrencyLimit::new(origin.clone(), 1).unwrap();
    let mut holder = limit.clone();
    assert_ready(&mut holder);
    let mut running = holder.call(1);

    let mut service = Deadline::new(limit.clone(), BUDGET, clock.clone());
    let waker = CountingWaker::new();
    assert!(waker.poll_ready(&mut service).is_pending());
    clock.advance(200 * MS);
    assert!(waker.poll_ready(&mut service).is_pending());

    origin.complete(1);
    expect_done(&mut running).unwrap();
    assert_eq!(waker.count(), 1);
    assert!(waker.poll_ready(&mut service).is_ready());

    // 200 ms of the 250 ms are gone: the call gets the remaining 50 ms.
    let mut response = service.call(2);
    assert!(waker.poll(&mut response).is_pending());
    clock.advance(49 * MS);
    assert!(waker.poll(&mut response).is_pending());
    clock.advance(MS);
    let error = expect_done(&mut response).unwrap_err();
    downcast::<Expired>(&error);
    assert!(!error.is::<Overloaded>());
    assert_eq!(error.to_string(), "deadline expired");

    drop(response);
    assert_eq!(origin.running(), 0, "the expired call is dropped");
    assert_eq!(limit.admission().stats().in_flight, 0);
    assert_eq!(clock.armed_timers(), 0);
}

#[test]
fn without_waiting_the_call_gets_the_whole_budget() {
    let clock = ManualClock::new();
    let origin = Origin::new();
    let mut service = Deadline::new(origin.clone(), BUDGET, clock.clone());
    assert_ready(&mut service);
    let mut response = service.call(1);
    assert!(poll_once(&mut response).is_pending());
    clock.advance(249 * MS);
    assert!(poll_once(&mut response).is_pending());
    origin.complete(1);
    assert_eq!(expect_done(&mut response).unwrap(), 1);
}

#[test]
fn expiry_while_waiting_fails_the_call_and_withdraws_the_waiter() {
    let clock = ManualClock::new();
    let origin = Origin::new();
    let limit = ConcurrencyLimit::new(origin.clone(), 1).unwrap();
    let admission = limit.admission().clone();
    let mut holder = limit.clone();
    assert_ready(&mut holder);

    let mut service = Deadline::new(limit, BUDGET, clock.clone());
    let waker = CountingWaker::new();
    assert!(waker.poll_ready(&mut service).is_pending());
    assert_eq!(admission.semaphore().waiters(), 1);

    clock.advance(250 * MS);
    assert_eq!(waker.count(), 1, "the deadline wakes the waiting task");
    assert!(waker.poll_ready(&mut service).is_ready());
    // Withdrawn at once: the semaphore queue is empty before `call`.
    assert_eq!(admission.semaphore().waiters(), 0);
    assert_eq!(admission.stats().queued, 0);

    let error = expect_done(&mut service.call(1)).unwrap_err();
    downcast::<Expired>(&error);
    assert!(origin.calls().is_empty());
    assert_eq!(clock.armed_timers(), 0);

    // The permit released later goes back to the pool, not to a ghost waiter.
    drop(holder);
    assert_eq!(admission.semaphore().available_permits(), 1);
    assert_eq!(admission.stats().in_flight, 0);
}

#[test]
fn after_an_expiry_the_next_request_gets_a_fresh_budget() {
    let clock = ManualClock::new();
    let origin = Origin::new();
    let limit = ConcurrencyLimit::new(origin.clone(), 1).unwrap();
    let mut holder = limit.clone();
    assert_ready(&mut holder);
    let mut service = Deadline::new(limit, BUDGET, clock.clone());
    assert!(poll_once(&mut futures::future::poll_fn(|cx| service.poll_ready(cx))).is_pending());
    clock.advance(BUDGET);
    assert_ready(&mut service);
    downcast::<Expired>(&expect_done(&mut service.call(1)).unwrap_err());

    drop(holder);
    assert_ready(&mut service);
    let mut response = service.call(2);
    clock.advance(249 * MS);
    assert!(poll_once(&mut response).is_pending());
    origin.complete(2);
    assert_eq!(expect_done(&mut response).unwrap(), 2);
}

#[test]
fn the_budget_starts_at_the_first_readiness_poll_not_at_construction() {
    let clock = ManualClock::new();
    let mut service = Deadline::with_stamp(echo_deadline(), BUDGET, clock.clone(), stamp);
    clock.advance(Duration::from_secs(1));
    assert_ready(&mut service);
    let at = expect_done(&mut service.call(Request::default()))
        .unwrap()
        .unwrap();
    assert_eq!(at, clock.now() + BUDGET);
}

#[test]
fn stamp_with_gives_downstream_the_remaining_budget() {
    let clock = ManualClock::new();
    let limit = ConcurrencyLimit::new(echo_deadline(), 1).unwrap();
    let mut holder = limit.clone();
    assert_ready(&mut holder);

    let mut service = DeadlineLayer::new(BUDGET, clock.clone())
        .stamp_with(stamp)
        .layer(limit);
    assert!(poll_once(&mut futures::future::poll_fn(|cx| service.poll_ready(cx))).is_pending());
    clock.advance(200 * MS);
    drop(holder);
    assert_ready(&mut service);

    let at = expect_done(&mut service.call(Request::default()))
        .unwrap()
        .unwrap();
    assert_eq!(at, Instant::from_origin(250 * MS));
    assert_eq!(at.saturating_duration_since(clock.now()), 50 * MS);
}

#[test]
fn each_request_is_stamped_with_its_own_deadline() {
    let clock = ManualClock::new();
    let mut service = Deadline::with_stamp(echo_deadline(), BUDGET, clock.clone(), stamp);
    assert_ready(&mut service);
    let first = expect_done(&mut service.call(Request::default())).unwrap();
    clock.advance(100 * MS);
    assert_ready(&mut service);
    let second = expect_done(&mut service.call(Request::default())).unwrap();
    assert_eq!(first, Some(Instant::from_origin(250 * MS)));
    assert_eq!(second, Some(Instant::from_origin(350 * MS)));
}

#[test]
fn without_a_stamp_the_request_is_left_alone() {
    let clock = ManualClock::new();
    let mut service = DeadlineLayer::new(BUDGET, clock).layer(echo_deadline());
    assert_ready(&mut service);
    assert_eq!(
        expect_done(&mut service.call(Request::default())).unwrap(),
        None
    );
}

#[test]
fn a_call_without_readiness_counts_the_budget_from_the_call() {
    let clock = ManualClock::new();
    clock.advance(10 * MS);
    let mut service = Deadline::with_stamp(echo_deadline(), BUDGET, clock.clone(), stamp);
    let at = expect_done(&mut service.call(Request::default())).unwrap();
    assert_eq!(at, Some(Instant::from_origin(260 * MS)));
}

#[test]
fn a_call_without_readiness_still_reaches_the_limits_not_ready_error() {
    let clock = ManualClock::new();
    let origin = Origin::new();
    let mut service = Deadline::new(
        ConcurrencyLimit::new(origin.clone(), 1).unwrap(),
        BUDGET,
        clock,
    );
    downcast::<NotReady>(&expect_done(&mut service.call(1)).unwrap_err());
    assert!(origin.calls().is_empty());
}

#[test]
fn a_response_that_completes_at_once_arms_no_timer() {
    let clock = ManualClock::new();
    let mut service = Deadline::new(echo_deadline(), BUDGET, clock.clone());
    assert_ready(&mut service);
    let mut response = service.call(Request::default());
    assert_eq!(clock.armed_timers(), 0);
    expect_done(&mut response).unwrap();
    assert_eq!(clock.armed_timers(), 0);
}

#[test]
fn the_readiness_timer_is_handed_to_the_response() {
    // Waited on a pending inner service, then called: one timer covers both.
    let clock = ManualClock::new();
    let origin = Origin::new();
    origin.set_readiness(Readiness::Pending);
    let mut service = Deadline::new(origin.clone(), BUDGET, clock.clone());
    assert!(poll_once(&mut futures::future::poll_fn(|cx| service.poll_ready(cx))).is_pending());
    assert_eq!(clock.armed_timers(), 1);
    clock.advance(100 * MS);
    origin.set_readiness(Readiness::Ready);
    assert_ready(&mut service);
    let mut response = service.call(1);
    assert!(poll_once(&mut response).is_pending());
    assert_eq!(clock.armed_timers(), 1);
    clock.advance(150 * MS);
    downcast::<Expired>(&expect_done(&mut response).unwrap_err());
}

#[test]
fn an_inner_readiness_error_passes_through() {
    let clock = ManualClock::new();
    let origin = Origin::new();
    origin.set_readiness(Readiness::Fail);
    let mut service = Deadline::new(origin, BUDGET, clock);
    match poll_once(&mut futures::future::poll_fn(|cx| service.poll_ready(cx))) {
        Poll::Ready(Err(error)) => assert_eq!(error.to_string(), "origin broken"),
        other => panic!("expected the inner error, got {other:?}"),
    }
}

#[test]
fn a_clone_starts_with_no_request_in_progress() {
    let clock = ManualClock::new();
    let limit = ConcurrencyLimit::new(echo_deadline(), 1).unwrap();
    let mut holder = limit.clone();
    assert_ready(&mut holder);
    let mut service = Deadline::with_stamp(limit, BUDGET, clock.clone(), stamp);
    let waker = CountingWaker::new();
    assert!(waker.poll_ready(&mut service).is_pending()); // budget fixed at t = 0
    clock.advance(100 * MS);
    let mut clone = service.clone(); // a clone does not share that request
    drop(holder.call(Request::default()));
    assert_ready(&mut service);
    let at = expect_done(&mut service.call(Request::default())).unwrap();
    assert_eq!(at, Some(Instant::from_origin(250 * MS)));
    assert_ready(&mut clone); // ready at once: its budget starts at call
    let at = expect_done(&mut clone.call(Request::default())).unwrap();
    assert_eq!(at, Some(Instant::from_origin(350 * MS)));
    let mut inner = service.into_inner().into_inner();
    assert_eq!(
        expect_done(&mut inner.call(Request::default())).unwrap(),
        None
    );
}

#[test]
fn polling_a_completed_response_again_is_an_error_not_a_panic() {
    let clock = ManualClock::new();
    let mut service = Deadline::new(echo_deadline(), BUDGET, clock);
    assert_ready(&mut service);
    let mut response = service.call(Request::default());
    expect_done(&mut response).unwrap();
    let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        poll_once(&mut response).map(|outcome| outcome.is_err())
    }));
    let again = again.expect("polling a finished response future must not panic");
    assert_eq!(again, Poll::Ready(true));
}
