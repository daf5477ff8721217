// Native only: tower, tokio and hyper are host dev-dependencies.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `LoadShed` counts its rejections (its own count, or an admission's
//! `stats().shed`), `shed_when_full` counts in the limit's stats, and
//! `LoadShed` outside a queue turns the queue off (documented, shown here).

mod support;

use edgeshed::admission::Admission;
use edgeshed::error::Overloaded;
use edgeshed::limit::{ConcurrencyLimitLayer, GlobalConcurrencyLimitLayer};
use edgeshed::load_shed::{LoadShed, LoadShedLayer};
use edgeshed::time::ManualClock;
use std::time::Duration;
use support::{assert_ready, downcast, expect_done, Origin};
use tower::ServiceBuilder;
use tower_layer::Layer;
use tower_service::Service;

/// Rejects `n` requests through `service` (whose inner limit is full).
fn reject<S: Service<u32, Error = edgeshed::BoxError>>(service: &mut S, n: usize)
where
    S::Future: Unpin,
    S::Response: std::fmt::Debug,
{
    for id in 0..n {
        assert_ready(service);
        downcast::<Overloaded>(&expect_done(&mut service.call(id as u32)).unwrap_err());
    }
}

#[test]
fn load_shed_counts_its_rejections_across_clones_and_layer_services() {
    let origin = Origin::new();
    let layer = LoadShedLayer::new();
    let limit = ConcurrencyLimitLayer::new(1).unwrap().layer(origin.clone());
    let mut holder = limit.clone();
    assert_ready(&mut holder);
    let _running = holder.call(99);

    let mut a = layer.layer(limit.clone());
    let mut b = a.clone();
    let mut c = layer.layer(limit.clone());
    reject(&mut a, 2);
    reject(&mut b, 1);
    reject(&mut c, 3);
    assert_eq!(a.shed_count(), 6);
    assert_eq!(layer.shed_count(), 6);
    // The limit never saw them: it only knows that nobody waited.
    assert_eq!(limit.admission().stats().shed, 0);
    assert_eq!(limit.admission().stats().queued, 0);

    // A standalone LoadShed has a count of its own.
    let mut own = LoadShed::new(limit.clone());
    reject(&mut own, 1);
    assert_eq!((own.shed_count(), layer.shed_count()), (1, 6));
}

#[test]
fn counting_in_an_admission_adds_to_its_stats_shed() {
    let origin = Origin::new();
    let admission = Admission::wait(1).unwrap();
    let mut service = ServiceBuilder::new()
        .layer(LoadShedLayer::counting_in(&admission))
        .layer(GlobalConcurrencyLimitLayer::new(admission.clone()))
        .service(origin.clone());
    let mut holder = GlobalConcurrencyLimitLayer::new(admission.clone()).layer(origin.clone());
    assert_ready(&mut holder);
    let _running = holder.call(99);

    reject(&mut service, 4);
    assert_eq!(admission.stats().shed, 4);
    assert_eq!(service.shed_count(), 4);
}

#[test]
fn shed_when_full_counts_in_the_limits_stats() {
    let origin = Origin::new();
    let mut service = ConcurrencyLimitLayer::new(1)
        .unwrap()
        .shed_when_full()
        .layer(origin.clone());
    let mut holder = service.clone();
    assert_ready(&mut holder);
    let _running = holder.call(99);
    reject(&mut service, 3);
    assert_eq!(service.admission().stats().shed, 3);
}

#[test]
fn load_shed_outside_a_queue_turns_the_queue_off() {
    let clock = ManualClock::new();
    let origin = Origin::new();
    let limit = ConcurrencyLimitLayer::new(1)
        .unwrap()
        .queue(8, Duration::from_millis(20))
        .unwrap()
        .clock(clock.clone())
        .layer(origin.clone());
    let mut holder = limit.clone();
    assert_ready(&mut holder);
    let _running = holder.call(99);

    let layer = LoadShedLayer::new();
    let mut outside = layer.layer(limit.clone());
    reject(&mut outside, 2);
    // Nobody ever waited although the queue has 8 places.
    assert_eq!(limit.admission().stats().queued, 0);
    assert_eq!(limit.admission().stats().queue_timeouts, 0);
    assert_eq!(layer.shed_count(), 2);
}

#[test]
fn load_shed_and_deadline_wrap_a_box_clone_service() {
    use tower::util::BoxCloneService;
    let origin = Origin::new();
    let limit = ConcurrencyLimitLayer::new(1).unwrap().layer(origin.clone());
    let boxed: BoxCloneService<u32, u32, edgeshed::BoxError> = BoxCloneService::new(limit);
    let clock = ManualClock::new();
    let deadline = edgeshed::deadline::Deadline::new(boxed, Duration::from_millis(50), clock);
    let mut service = LoadShed::new(deadline);
    assert_ready(&mut service);
    let mut response = service.call(1);
    origin.complete(1);
    assert_eq!(expect_done(&mut response).unwrap(), 1);
}
