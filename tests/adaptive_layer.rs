#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! `AdaptiveLimitLayer`: every admitted call is sampled from admission to
//! completion; the limit moves, never preempts running work, and the layer
//! composes with the policies, `LoadShed`, `Deadline` and a global limit.

mod support;

use edgeshed::admission::Admission;
use edgeshed::deadline::DeadlineLayer;
use edgeshed::error::{BoxError, Expired, Overloaded};
use edgeshed::limit::adaptive::{
    AdaptiveLimitLayer, Aimd, Bounds, Gradient2, Limit, Outcome, Vegas,
};
use edgeshed::limit::GlobalConcurrencyLimitLayer;
use edgeshed::load_shed::LoadShedLayer;
use edgeshed::time::ManualClock;
use std::time::Duration;
use support::{assert_ready, expect_done, poll_once, Origin};
use tower::ServiceBuilder;
use tower_layer::Layer;
use tower_service::Service;

fn aimd(initial: usize) -> Aimd {
    Aimd::new(Bounds::new(initial, 1, 64).unwrap(), 0.5)
}

#[test]
fn defaults_are_edge_sized() {
    for bounds in [
        Aimd::default().bounds(),
        Gradient2::default().bounds(),
        Vegas::default().bounds(),
    ] {
        assert_eq!((bounds.initial(), bounds.min(), bounds.max()), (6, 1, 64));
    }
}

#[test]
fn bounds_refuse_what_cannot_work_and_name_the_parameter() {
    assert_eq!(
        Bounds::new(1, 0, 4).unwrap_err().to_string(),
        "min_limit must be at least 1, got 0"
    );
    assert_eq!(
        Bounds::new(3, 4, 2).unwrap_err().to_string(),
        "max_limit must be at least min_limit"
    );
    assert!(Bounds::new(9, 1, 8)
        .unwrap_err()
        .to_string()
        .starts_with("initial_limit"));
}

#[test]
fn an_inner_error_is_a_drop_and_lowering_never_preempts_running_work() {
    let clock = ManualClock::new();
    let origin = Origin::new();
    let layer = AdaptiveLimitLayer::new(aimd(4))
        .shed_when_full()
        .clock(clock.clone());
    let mut service = layer.layer(origin.clone());
    let mut responses = Vec::new();
    for id in 1..=4 {
        assert_ready(&mut service);
        responses.push(service.call(id));
    }
    clock.advance(Duration::from_millis(10));
    origin.fail(1, "boom");
    assert!(expect_done(&mut responses[0]).is_err());
    // Backed off 4 -> 2 while three calls still run: none is interrupted.
    let stats = service.admission().stats();
    assert_eq!((stats.limit, stats.in_flight), (2, 3));
    assert_eq!(service.get_ref().controller().limit(), 2);
    assert_eq!(origin.running(), 3);
    // Nothing new gets in until in-flight is below the new limit.
    assert_ready(&mut service);
    let error = expect_done(&mut service.call(5)).unwrap_err();
    assert!(error.is::<Overloaded>());
    for (index, id) in [(1, 2), (2, 3)] {
        origin.complete(id);
        assert_eq!(expect_done(&mut responses[index]).unwrap(), id);
    }
    assert_eq!(service.admission().stats().in_flight, 1);
    assert_ready(&mut service);
    let mut sixth = service.call(6);
    assert!(poll_once(&mut sixth).is_pending());
    assert_eq!(origin.calls().last(), Some(&6));
}

#[test]
fn successes_under_load_raise_the_limit() {
    let clock = ManualClock::new();
    let origin = Origin::new();
    let mut service = AdaptiveLimitLayer::new(aimd(2))
        .clock(clock.clone())
        .layer(origin.clone());
    let mut id = 0;
    for _ in 0..20 {
        let mut round = Vec::new();
        let limit = service.admission().stats().limit;
        for _ in 0..limit {
            id += 1;
            assert_ready(&mut service);
            round.push((id, service.call(id)));
        }
        clock.advance(Duration::from_millis(5));
        for (id, mut response) in round {
            origin.complete(id);
            expect_done(&mut response).unwrap();
        }
    }
    // +1 per round trip in which every call counted; here only the later
    // half of each round started with half the limit in flight: +1/2.
    assert!(
        (12..=14).contains(&service.admission().stats().limit),
        "{:?}",
        service.admission().stats()
    );
}

#[test]
fn the_drop_classification_is_pluggable() {
    let clock = ManualClock::new();
    let origin = Origin::new();
    // Odd answers stand for 503s: drops, though the inner service succeeded.
    let odd_is_overload = |outcome: Result<&u32, &BoxError>| match outcome {
        Ok(id) if id % 2 == 0 => Outcome::Served,
        _ => Outcome::Dropped,
    };
    let mut service = AdaptiveLimitLayer::new(aimd(8))
        .classify(odd_is_overload)
        .clock(clock.clone())
        .layer(origin.clone());
    assert_ready(&mut service);
    let mut even = service.call(2);
    origin.complete(2);
    expect_done(&mut even).unwrap();
    assert_eq!(service.admission().stats().limit, 8);
    clock.advance(Duration::from_millis(1));
    assert_ready(&mut service);
    let mut odd = service.call(3);
    origin.complete(3);
    assert_eq!(expect_done(&mut odd).unwrap(), 3);
    assert_eq!(service.admission().stats().limit, 4);
}

#[test]
fn a_bounded_queue_waits_and_refused_calls_give_no_sample() {
    let clock = ManualClock::new();
    let origin = Origin::new();
    let layer = AdaptiveLimitLayer::new(aimd(1))
        .queue(1, Duration::from_millis(20))
        .unwrap();
    assert!(AdaptiveLimitLayer::new(aimd(1))
        .queue(1, Duration::ZERO)
        .is_err());
    let mut service = layer.clock(clock.clone()).layer(origin.clone());
    assert_ready(&mut service);
    let mut first = service.call(1);
    let mut waiter = service.clone();
    assert!(support::poll_ready(&mut waiter).is_pending());
    let mut third = service.clone();
    assert_ready(&mut third); // the queue (1 place) is full: shed
    assert!(expect_done(&mut third.call(3))
        .unwrap_err()
        .is::<Overloaded>());
    clock.advance(Duration::from_millis(20));
    assert!(support::poll_ready(&mut waiter).is_ready());
    assert!(expect_done(&mut waiter.call(2))
        .unwrap_err()
        .is::<Overloaded>());
    // Neither refusal reached the origin or moved the limit.
    assert_eq!(service.admission().stats().limit, 1);
    origin.complete(1);
    expect_done(&mut first).unwrap();
    assert_eq!(origin.calls(), [1]);
}

#[test]
fn composes_with_load_shed_deadline_and_a_global_limit() {
    let clock = ManualClock::new();
    let origin = Origin::new();
    let global = Admission::wait(16).unwrap();
    let mut service = ServiceBuilder::new()
        .layer(LoadShedLayer::new())
        .layer(GlobalConcurrencyLimitLayer::new(global.clone()))
        .layer(
            AdaptiveLimitLayer::new(aimd(4))
                .shed_when_full()
                .clock(clock.clone()),
        )
        .layer(DeadlineLayer::new(Duration::from_millis(50), clock.clone()))
        .service(origin.clone());
    assert_ready(&mut service);
    let mut slow = service.call(1);
    assert!(poll_once(&mut slow).is_pending());
    assert_eq!(global.stats().in_flight, 1);
    // The deadline inside the adaptive limit fires: `Expired` (the caller's
    // budget, not the origin's answer) is ignored, no backoff.
    clock.advance(Duration::from_millis(50));
    let error = expect_done(&mut slow).unwrap_err();
    assert!(error.is::<Expired>(), "{error}");
    assert_eq!(global.stats().in_flight, 0);
    assert_eq!(service.get_ref().get_ref().admission().stats().limit, 4);
    assert_ready(&mut service);
    let mut next = service.call(2);
    origin.complete(2);
    assert_eq!(expect_done(&mut next).unwrap(), 2);
}
