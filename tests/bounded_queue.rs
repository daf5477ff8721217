#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! The bounded admission queue: at most `max_queue` waiters, each for at most
//! its queue timeout, and nothing left behind when a waiter gives up.

mod support;

use edgeshed::admission::{Admission, AdmitError, Policy, Stats};
use edgeshed::error::{Closed, Expired, OverloadCause, Overloaded};
use edgeshed::limit::{ConcurrencyLimit, ConcurrencyLimitLayer};
use edgeshed::time::{Clock, ManualClock};
use std::task::Poll;
use std::time::Duration;
use support::{assert_ready, downcast, expect_done, poll_once, CountingWaker, Origin};
use tower_layer::Layer;
use tower_service::Service;

const MS: Duration = Duration::from_millis(1);

fn queue_policy(max_queue: usize, timeout_ms: u64) -> Policy {
    Policy::Queue {
        max_queue,
        timeout: Duration::from_millis(timeout_ms),
    }
}

fn cause(error: &AdmitError) -> Option<OverloadCause> {
    error.overloaded().map(|overloaded| overloaded.cause())
}

type Limited = ConcurrencyLimit<Origin, ManualClock>;

/// A limit of 1 with a queue of 2 waiting at most 20 ms, the permit held.
fn saturated() -> (ManualClock, Origin, Limited, Limited) {
    let clock = ManualClock::new();
    let origin = Origin::new();
    let service = ConcurrencyLimitLayer::new(1)
        .unwrap()
        .queue(2, 20 * MS)
        .unwrap()
        .clock(clock.clone())
        .layer(origin.clone());
    let mut holder = service.clone();
    assert_ready(&mut holder);
    (clock, origin, service, holder)
}

#[test]
fn the_waiter_beyond_max_queue_is_rejected_at_once() {
    let (clock, origin, service, _holder) = saturated();
    let mut waiting: Vec<Limited> = (0..2).map(|_| service.clone()).collect();
    for svc in &mut waiting {
        assert!(poll_once(&mut futures::future::poll_fn(|cx| svc.poll_ready(cx))).is_pending());
    }
    assert_eq!(service.admission().stats().queued, 2);

    let mut extra = service.clone();
    assert_ready(&mut extra); // decided at once, no waiting
    let error = expect_done(&mut extra.call(3)).unwrap_err();
    assert_eq!(downcast::<Overloaded>(&error).cause(), OverloadCause::Shed);
    assert_eq!(clock.now().since_origin(), Duration::ZERO);
    assert!(origin.calls().is_empty());
    let stats = service.admission().stats();
    assert_eq!((stats.queued, stats.shed, stats.admitted), (2, 1, 1));
}

#[test]
fn a_timed_out_waiter_is_rejected_and_leaves_no_trace() {
    let (clock, origin, service, holder) = saturated();
    let mut waiting = service.clone();
    let waker = CountingWaker::new();
    assert!(waker.poll_ready(&mut waiting).is_pending());
    assert_eq!(clock.armed_timers(), 1);

    clock.advance(19 * MS);
    assert_eq!(waker.count(), 0);
    assert!(waker.poll_ready(&mut waiting).is_pending());

    clock.advance(MS);
    assert_eq!(waker.count(), 1, "the queue timeout wakes the waiter");
    assert!(waker.poll_ready(&mut waiting).is_ready());
    let error = expect_done(&mut waiting.call(2)).unwrap_err();
    assert_eq!(
        downcast::<Overloaded>(&error).cause(),
        OverloadCause::QueueTimeout
    );
    assert_eq!(error.to_string(), "service overloaded");

    assert_eq!(service.admission().semaphore().waiters(), 0);
    assert_eq!(service.admission().stats().queued, 0);
    assert_eq!(clock.armed_timers(), 0);
    assert_eq!(service.admission().stats().queue_timeouts, 1);
    assert!(origin.calls().is_empty());

    // The released permit is not captured by the timed-out waiter.
    drop(holder);
    assert_eq!(service.admission().semaphore().available_permits(), 1);
    assert_eq!(waker.count(), 1);
}

#[test]
fn a_timed_out_waiter_leaves_the_queue_when_the_timer_fires_not_when_dropped() {
    let (clock, _origin, service, _holder) = saturated();
    let mut waiting = service.clone();
    let waker = CountingWaker::new();
    assert!(waker.poll_ready(&mut waiting).is_pending());
    clock.advance(20 * MS);
    // The woken task polls and learns of the timeout; the service itself stays alive.
    assert!(waker.poll_ready(&mut waiting).is_ready());
    assert_eq!(service.admission().stats().queued, 0);
    assert_eq!(clock.armed_timers(), 0);
    // Readiness keeps reporting the refusal until the call consumes it.
    assert!(waker.poll_ready(&mut waiting).is_ready());
    downcast::<Overloaded>(&expect_done(&mut waiting.call(1)).unwrap_err());
}

#[test]
fn each_waiter_has_its_own_timeout_and_a_later_one_still_gets_the_permit() {
    let (clock, origin, service, mut holder) = saturated();
    let mut early = service.clone();
    let early_waker = CountingWaker::new();
    assert!(early_waker.poll_ready(&mut early).is_pending());
    clock.advance(10 * MS);
    let mut late = service.clone();
    let late_waker = CountingWaker::new();
    assert!(late_waker.poll_ready(&mut late).is_pending());
    assert_eq!(clock.armed_timers(), 2);

    clock.advance(10 * MS); // t = 20: only the early one times out
    assert_eq!((early_waker.count(), late_waker.count()), (1, 0));
    assert!(early_waker.poll_ready(&mut early).is_ready());
    assert_eq!(
        downcast::<Overloaded>(&expect_done(&mut early.call(10)).unwrap_err()).cause(),
        OverloadCause::QueueTimeout
    );

    let mut running = holder.call(1);
    origin.complete(1);
    expect_done(&mut running).unwrap();
    assert_eq!(late_waker.count(), 1);
    assert!(late_waker.poll_ready(&mut late).is_ready());
    assert_eq!(
        clock.armed_timers(),
        0,
        "an admitted waiter disarms its timer"
    );
    let mut response = late.call(2);
    origin.complete(2);
    assert_eq!(expect_done(&mut response).unwrap(), 2);

    let stats = service.admission().stats();
    assert_eq!(
        (stats.admitted, stats.queue_timeouts, stats.shed),
        (2, 1, 0)
    );
}

#[test]
fn a_freed_slot_in_the_queue_accepts_a_new_waiter() {
    let (_clock, _origin, service, _holder) = saturated();
    let mut first = service.clone();
    let mut second = service.clone();
    for svc in [&mut first, &mut second] {
        assert!(poll_once(&mut futures::future::poll_fn(|cx| svc.poll_ready(cx))).is_pending());
    }
    drop(first);
    let mut third = service.clone();
    assert!(poll_once(&mut futures::future::poll_fn(|cx| third.poll_ready(cx))).is_pending());
    assert_eq!(service.admission().stats().queued, 2);
    assert_eq!(service.admission().stats().shed, 0);
}

#[test]
fn stats_count_admitted_shed_and_timeouts_exactly() {
    let clock = ManualClock::new();
    let admission = Admission::new(2, queue_policy(1, 5), clock.clone()).unwrap();
    assert_eq!(admission.policy(), queue_policy(1, 5));
    // `Stats` is `#[non_exhaustive]`: built from its default, field by field.
    let mut expected = Stats::default();
    expected.limit = 2;
    assert_eq!(admission.stats(), expected);

    let mut permits = Vec::new();
    for _ in 0..2 {
        permits.push(futures::executor::block_on(admission.admit()).unwrap());
    }
    let mut queued = admission.admit();
    assert!(poll_once(&mut queued).is_pending());
    for _ in 0..3 {
        let error = futures::executor::block_on(admission.admit()).unwrap_err();
        assert_eq!(cause(&error), Some(OverloadCause::Shed));
    }
    assert!(
        admission.try_admit().is_none(),
        "try_admit refusals are not counted"
    );
    clock.advance(5 * MS);
    let error = expect_done(&mut queued).unwrap_err();
    assert_eq!(cause(&error), Some(OverloadCause::QueueTimeout));

    let mut queued = admission.admit();
    assert!(poll_once(&mut queued).is_pending());
    drop(permits.pop());
    let third = expect_done(&mut queued).unwrap();
    drop(permits);
    let fourth = admission.try_admit().unwrap();

    let mut expected = Stats::default();
    (expected.in_flight, expected.queued, expected.limit) = (2, 0, 2);
    (expected.admitted, expected.shed) = (4, 3);
    (expected.queue_timeouts, expected.expired) = (1, 0);
    // Calls without a criticality are default calls.
    let default = &mut expected.by_criticality.default;
    (default.admitted, default.shed, default.queue_timeouts) = (4, 3, 1);
    default.in_flight = 2;
    assert_eq!(admission.stats(), expected);
    drop((third, fourth));
    assert_eq!(admission.stats().in_flight, 0);
    assert_eq!(clock.armed_timers(), 0);
}

#[test]
fn admit_before_a_deadline_earlier_than_the_queue_timeout_expires() {
    let clock = ManualClock::new();
    let admission = Admission::new(1, queue_policy(4, 50), clock.clone()).unwrap();
    let held = admission.try_admit().unwrap();

    let mut waiting = admission.admit_before(clock.now() + 30 * MS);
    let waker = CountingWaker::new();
    assert!(waker.poll(&mut waiting).is_pending());
    clock.advance(29 * MS);
    assert!(waker.poll(&mut waiting).is_pending());
    clock.advance(MS);
    assert_eq!(waker.count(), 1);
    let error = expect_done(&mut waiting).unwrap_err();
    assert_eq!(error, AdmitError::Expired);
    assert!(error.overloaded().is_none());
    assert!(error.into_box_error().is::<Expired>());
    assert_eq!(error.to_string(), "deadline expired");

    let stats = admission.stats();
    assert_eq!(
        (stats.expired, stats.queue_timeouts, stats.queued),
        (1, 0, 0)
    );
    assert_eq!(clock.armed_timers(), 0);
    drop(held);
    assert_eq!(admission.semaphore().available_permits(), 1);
}

#[test]
fn admit_before_a_deadline_later_than_the_queue_timeout_times_out() {
    let clock = ManualClock::new();
    let admission = Admission::new(1, queue_policy(4, 50), clock.clone()).unwrap();
    let _held = admission.try_admit().unwrap();
    let mut waiting = admission.admit_before(clock.now() + 80 * MS);
    assert!(poll_once(&mut waiting).is_pending());
    clock.advance(50 * MS);
    let error = expect_done(&mut waiting).unwrap_err();
    assert_eq!(cause(&error), Some(OverloadCause::QueueTimeout));
    let stats = admission.stats();
    assert_eq!((stats.expired, stats.queue_timeouts), (0, 1));
}

#[test]
fn admit_before_a_deadline_already_passed_fails_at_once_even_with_capacity() {
    let clock = ManualClock::new();
    clock.advance(100 * MS);
    let admission = Admission::new(1, queue_policy(4, 50), clock.clone()).unwrap();
    let mut late = admission.admit_before(clock.now());
    assert_eq!(expect_done(&mut late).unwrap_err(), AdmitError::Expired);
    let stats = admission.stats();
    assert_eq!((stats.expired, stats.admitted, stats.in_flight), (1, 0, 0));
}

#[test]
fn admit_before_bounds_a_wait_policy_too() {
    let clock = ManualClock::new();
    let admission = Admission::new(1, Policy::Wait, clock.clone()).unwrap();
    let _held = admission.try_admit().unwrap();
    let mut waiting = admission.admit_before(clock.now() + 10 * MS);
    assert!(poll_once(&mut waiting).is_pending());
    clock.advance(10 * MS);
    assert_eq!(expect_done(&mut waiting).unwrap_err(), AdmitError::Expired);
    assert_eq!(admission.semaphore().waiters(), 0);
}

#[test]
fn a_dropped_queued_admit_leaves_no_waiter_or_timer() {
    let clock = ManualClock::new();
    let admission = Admission::new(1, queue_policy(4, 50), clock.clone()).unwrap();
    let held = admission.try_admit().unwrap();
    let mut waiting = admission.admit();
    assert!(poll_once(&mut waiting).is_pending());
    assert_eq!((admission.stats().queued, clock.armed_timers()), (1, 1));
    drop(waiting);
    assert_eq!((admission.stats().queued, clock.armed_timers()), (0, 0));
    drop(held);
    assert_eq!(admission.semaphore().available_permits(), 1);
}

#[test]
fn an_admit_polled_after_completion_answers_closed() {
    let admission = Admission::shed(1).unwrap();
    let mut admit = admission.admit();
    let permit = expect_done(&mut admit).unwrap();
    assert_eq!(expect_done(&mut admit).unwrap_err(), AdmitError::Closed);
    assert_eq!(admission.stats().in_flight, 1);
    drop(permit);
}

#[test]
fn max_queue_zero_behaves_like_shed() {
    let clock = ManualClock::new();
    let admission = Admission::new(1, queue_policy(0, 50), clock.clone()).unwrap();
    let _held = admission.try_admit().unwrap();
    let error = expect_done(&mut admission.admit()).unwrap_err();
    assert_eq!(cause(&error), Some(OverloadCause::Shed));
    assert_eq!((admission.stats().shed, admission.stats().queued), (1, 0));
    assert_eq!(clock.armed_timers(), 0);
}

#[test]
fn the_shed_and_wait_constructors_pick_their_policies() {
    let shed = Admission::shed(1).unwrap();
    assert_eq!(shed.policy(), Policy::Shed);
    let _held = shed.try_admit().unwrap();
    let error = expect_done(&mut shed.admit()).unwrap_err();
    assert_eq!(cause(&error), Some(OverloadCause::Shed));
    assert!(error.into_box_error().is::<Overloaded>());

    let wait = Admission::wait(1).unwrap();
    assert_eq!(wait.policy(), Policy::Wait);
    let held = wait.try_admit().unwrap();
    let mut waiting = wait.admit();
    assert!(poll_once(&mut waiting).is_pending());
    drop(held);
    assert!(matches!(poll_once(&mut waiting), Poll::Ready(Ok(_))));
}

#[test]
fn a_closed_admission_refuses_with_closed() {
    let clock = ManualClock::new();
    let admission = Admission::new(1, queue_policy(2, 50), clock.clone()).unwrap();
    let held = admission.try_admit().unwrap();
    let mut waiting = admission.admit();
    assert!(poll_once(&mut waiting).is_pending());
    admission.semaphore().close();
    let error = expect_done(&mut waiting).unwrap_err();
    assert_eq!(error, AdmitError::Closed);
    assert!(error.into_box_error().is::<Closed>());
    assert_eq!(
        expect_done(&mut admission.admit()).unwrap_err(),
        AdmitError::Closed
    );
    assert!(admission.try_admit().is_none());
    drop(held);
    assert_eq!(admission.stats().in_flight, 0);
}

#[test]
fn a_permit_released_before_the_timed_out_waiter_polls_is_taken_by_it() {
    // The timer fired, but a permit was handed over before the waiter ran:
    // it is admitted rather than rejected, and nothing is lost either way.
    let clock = ManualClock::new();
    let admission = Admission::new(1, queue_policy(2, 10), clock.clone()).unwrap();
    let held = admission.try_admit().unwrap();
    let mut waiting = admission.admit();
    assert!(poll_once(&mut waiting).is_pending());
    clock.advance(10 * MS);
    drop(held);
    let permit = expect_done(&mut waiting).unwrap();
    assert_eq!(admission.stats().queue_timeouts, 0);
    assert_eq!(clock.armed_timers(), 0);
    drop(permit);
    assert_eq!(admission.semaphore().available_permits(), 1);
}

#[test]
fn layer_queue_constructor_matches_with_policy() {
    let clock = ManualClock::new();
    let a = ConcurrencyLimitLayer::new(3)
        .unwrap()
        .queue(2, 7 * MS)
        .unwrap()
        .clock(clock.clone())
        .layer(Origin::new());
    let b = ConcurrencyLimitLayer::with_policy(3, queue_policy(2, 7), clock.clone())
        .unwrap()
        .layer(Origin::new());
    assert_eq!(a.admission().policy(), b.admission().policy());
    assert_eq!(a.admission().stats().limit, 3);
    let _clock: &ManualClock = a.admission().clock();
}
