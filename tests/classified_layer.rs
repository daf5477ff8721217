#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! The tower layer that admits each request as it says: criticality and key
//! read from `http::Request` extensions or by a closure; refusals map to 503
//! with their reason or 429; an abandoned request holds nothing; adaptive
//! limits compose.

mod support;

use edgeshed::admission::{Admission, Call, Criticality, Options, Policy, Reserve};
use edgeshed::error::{BoxError, Overloaded, RateLimited};
use edgeshed::limit::adaptive::{Aimd, Controller, Sampled};
use edgeshed::limit::ClassifiedLimitLayer;
use edgeshed::time::ManualClock;
use edgeshed::Key;
use std::task::Poll;
use std::time::Duration;
use support::{downcast, poll_once, Origin};
use tower::ServiceExt;
use tower_layer::Layer;

fn admission(limit: usize, policy: Policy) -> Admission<ManualClock> {
    let options = Options::new().reserve(Reserve::default());
    Admission::with_options(limit, policy, options, ManualClock::new()).unwrap()
}

fn request(criticality: Option<Criticality>, key: Option<&str>) -> http::Request<()> {
    let mut request = http::Request::new(());
    if let Some(criticality) = criticality {
        request.extensions_mut().insert(criticality);
    }
    if let Some(key) = key {
        request.extensions_mut().insert(Key::from(key));
    }
    request
}

/// What an HTTP front end answers for an error of the layer.
fn status(error: &BoxError) -> (u16, &'static str) {
    if let Some(overloaded) = error.downcast_ref::<Overloaded>() {
        (503, overloaded.reason().as_str())
    } else if let Some(limited) = error.downcast_ref::<RateLimited>() {
        (429, limited.reason().as_str())
    } else {
        (500, "other")
    }
}

#[test]
fn criticality_and_key_come_from_the_request_extensions() {
    let admission = admission(2, Policy::Shed);
    let origin =
        tower::service_fn(|_: http::Request<()>| std::future::pending::<Result<(), BoxError>>());
    let svc = ClassifiedLimitLayer::new(admission.clone())
        .from_extensions()
        .layer(origin);
    // No criticality in the extensions: a default call (ceiling 1 of 2).
    let mut running = Box::pin(svc.clone().oneshot(request(None, None)));
    assert!(poll_once(&mut running).is_pending());
    let refused = futures::executor::block_on(
        svc.clone()
            .oneshot(request(Some(Criticality::Sheddable), None)),
    );
    assert_eq!(status(&refused.unwrap_err()), (503, "limit"));
    let mut critical = Box::pin(
        svc.clone()
            .oneshot(request(Some(Criticality::Critical), Some("a"))),
    );
    assert!(
        poll_once(&mut critical).is_pending(),
        "critical gets the reserved slot"
    );
    let by = admission.stats().by_criticality;
    assert_eq!(
        (
            by.default.in_flight,
            by.critical.in_flight,
            by.sheddable.shed
        ),
        (1, 1, 1)
    );
    assert_eq!(admission.semaphore().active_keys(), 1, "the key is counted");
    drop((running, critical));
    assert_eq!(admission.stats().in_flight, 0);
    assert_eq!(admission.semaphore().active_keys(), 0);
}

#[test]
fn a_closure_reads_the_call_and_a_key_over_its_share_gets_429_not_503() {
    let admission = admission(2, Policy::queue(4, Duration::from_millis(50)));
    let origin = Origin::new();
    let svc = ClassifiedLimitLayer::new(admission.clone())
        .read_call_with(|id: &u32| {
            Call::new(Criticality::Critical).with_key(if *id < 100 { "noisy" } else { "quiet" })
        })
        .layer(origin.clone());
    let mut noisy: Vec<_> = (1..=2)
        .map(|id| Box::pin(svc.clone().oneshot(id)))
        .collect();
    for call in &mut noisy {
        assert!(poll_once(call).is_pending());
    }
    assert_eq!(origin.running(), 2, "both reached the origin");
    let mut quiet = Box::pin(svc.clone().oneshot(100));
    assert!(poll_once(&mut quiet).is_pending(), "quiet waits for a slot");
    let refused = futures::executor::block_on(svc.clone().oneshot(3)).unwrap_err();
    assert_eq!(status(&refused), (429, "fair_share"));
    assert_eq!(downcast::<RateLimited>(&refused).retry_after(), None);
    // The noisy call that ends frees its slot for the quiet key.
    origin.complete(1);
    assert!(matches!(poll_once(&mut noisy[0]), Poll::Ready(Ok(1))));
    assert!(
        poll_once(&mut quiet).is_pending(),
        "admitted, now running at the origin"
    );
    assert_eq!(origin.calls(), [1, 2, 100]);
    assert_eq!(admission.stats().fair_share_refused, 1);
}

#[test]
fn a_request_dropped_while_queued_or_displaced_holds_and_captures_nothing() {
    let admission = admission(1, Policy::queue(1, Duration::from_millis(50)));
    let origin = Origin::new();
    let svc = ClassifiedLimitLayer::new(admission.clone())
        .read_call_with(|id: &u32| {
            Call::new(if *id >= 10 {
                Criticality::Critical
            } else {
                Criticality::Sheddable
            })
        })
        .layer(origin.clone());
    let mut first = Box::pin(svc.clone().oneshot(10));
    assert!(poll_once(&mut first).is_pending());
    let mut queued = Box::pin(svc.clone().oneshot(1));
    assert!(poll_once(&mut queued).is_pending());
    let mut displacing = Box::pin(svc.clone().oneshot(11));
    assert!(poll_once(&mut displacing).is_pending());
    let displaced = match poll_once(&mut queued) {
        Poll::Ready(Err(error)) => error,
        other => panic!("expected the sheddable waiter to be displaced, got {other:?}"),
    };
    assert_eq!(status(&displaced), (503, "displaced"));
    drop(displacing); // abandoned while queued
    origin.complete(10);
    assert!(matches!(poll_once(&mut first), Poll::Ready(Ok(10))));
    // Nobody kept or captured the permit: it is free for the next caller.
    assert_eq!(admission.stats().in_flight, 0);
    assert_eq!(admission.semaphore().available_permits(), 1);
    let mut next = Box::pin(svc.clone().oneshot(12));
    assert!(poll_once(&mut next).is_pending());
    assert_eq!(origin.running(), 1);
}

#[test]
fn the_reserves_follow_an_adaptive_limit_that_moves_the_semaphore() {
    let clock = ManualClock::new();
    let admission = admission(1, Policy::Shed);
    let controller = Controller::new(Aimd::default(), admission.semaphore().clone());
    assert_eq!(admission.stats().limit, 6, "the algorithm's initial limit");
    let origin = Origin::new();
    let sampled = Sampled::new(
        origin.clone(),
        controller,
        clock,
        edgeshed::limit::adaptive::DefaultClassify,
    );
    let svc = ClassifiedLimitLayer::new(admission.clone())
        .read_call_with(|_: &u32| Call::new(Criticality::Sheddable))
        .layer(sampled);
    // A critical call in flight, so that the reserve binds (it is lent
    // while no more critical call is present or was seen lately).
    let _critical = admission.try_admit_as(Criticality::Critical).unwrap();
    let mut running: Vec<_> = (1..=5)
        .map(|id| Box::pin(svc.clone().oneshot(id)))
        .collect();
    let admitted = running
        .iter_mut()
        .map(poll_once)
        .filter(Poll::is_pending)
        .count();
    assert_eq!(
        admitted, 3,
        "0.7 × 6 = 4 in flight at limit 6: 1 critical, 3 sheddable"
    );
    // A drop makes AIMD back off (6 → 5): the sheddable ceiling follows,
    // 0.7 × 5 = 3, so with 3 in flight the next one is shed (at limit 6 it
    // would have been the 4th of 4).
    origin.fail(1, "503 from the origin");
    assert!(matches!(poll_once(&mut running[0]), Poll::Ready(Err(_))));
    assert_eq!(admission.stats().limit, 5);
    assert_eq!(admission.stats().in_flight, 3);
    let more = futures::executor::block_on(svc.clone().oneshot(9));
    assert_eq!(status(&more.unwrap_err()), (503, "limit"));
}
