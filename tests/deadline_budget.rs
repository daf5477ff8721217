// Native only: tower, tokio and hyper are host dev-dependencies.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! When `Deadline`'s budget starts: at the first `poll_ready` that has to
//! wait, otherwise at `call`, so that readiness polled ahead of a request
//! (tower's `ReadyCache`, a balancer) does not spend it.

mod support;

use edgeshed::deadline::DeadlineLayer;
use edgeshed::limit::ConcurrencyLimit;
use edgeshed::time::{Clock, Instant, ManualClock};
use std::convert::Infallible;
use std::time::Duration;
use support::{assert_ready, expect_done, CountingWaker};
use tower_layer::Layer;
use tower_service::Service;

const MS: Duration = Duration::from_millis(1);
const BUDGET: Duration = Duration::from_millis(250);

struct Request {
    deadline: Option<Instant>,
}

fn stamp(request: &mut Request, at: Instant) {
    request.deadline = Some(at);
}

fn echo_deadline(
) -> impl Service<Request, Response = Option<Instant>, Error = Infallible, Future: Unpin> + Clone {
    tower::service_fn(|request: Request| std::future::ready(Ok(request.deadline)))
}

#[test]
fn readiness_polled_ahead_of_the_request_spends_no_budget() {
    let clock = ManualClock::new();
    let mut service = DeadlineLayer::new(BUDGET, clock.clone())
        .stamp_with(stamp)
        .layer(echo_deadline());
    // A ReadyCache polls the service ready and keeps it idle for a second.
    assert_ready(&mut service);
    clock.advance(1000 * MS);
    let at = expect_done(&mut service.call(Request { deadline: None }))
        .unwrap()
        .unwrap();
    assert_eq!(at, clock.now() + BUDGET, "the whole budget is left at call");
}

#[test]
fn a_wait_for_readiness_is_part_of_the_budget() {
    let clock = ManualClock::new();
    let limit = ConcurrencyLimit::new(echo_deadline(), 1).unwrap();
    let mut holder = limit.clone();
    assert_ready(&mut holder);
    let mut service = DeadlineLayer::new(BUDGET, clock.clone())
        .stamp_with(stamp)
        .layer(limit);

    let waker = CountingWaker::new();
    let started = clock.now();
    assert!(waker.poll_ready(&mut service).is_pending()); // the budget starts here
    clock.advance(100 * MS);
    // The permit comes back; the request is admitted 100 ms into its budget.
    let done = holder.call(Request { deadline: None });
    drop(done);
    assert!(waker.poll_ready(&mut service).is_ready());
    clock.advance(50 * MS);
    let at = expect_done(&mut service.call(Request { deadline: None }))
        .unwrap()
        .unwrap();
    assert_eq!(at, started + BUDGET);
    assert_eq!(at.saturating_duration_since(clock.now()), 100 * MS);
}

#[test]
fn each_request_gets_a_fresh_budget_after_the_previous_call() {
    let clock = ManualClock::new();
    let mut service = DeadlineLayer::new(BUDGET, clock.clone())
        .stamp_with(stamp)
        .layer(echo_deadline());
    for _ in 0..3 {
        assert_ready(&mut service);
        clock.advance(400 * MS); // longer than the budget, idle between requests
        let at = expect_done(&mut service.call(Request { deadline: None }))
            .unwrap()
            .unwrap();
        assert_eq!(at, clock.now() + BUDGET);
    }
}
