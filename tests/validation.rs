// Native only: tower, tokio and hyper are host dev-dependencies.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Constructors refuse what cannot work, the way the JS `Limiter` does: a
//! zero limit (every call would be "service overloaded") and a zero queue
//! timeout (every waiter would time out at once). The error names the parameter.

use edgeshed::admission::{Admission, Policy};
use edgeshed::error::{InvalidConfig, Parameter};
use edgeshed::limit::{ConcurrencyLimit, ConcurrencyLimitLayer};
use edgeshed::time::ManualClock;
use std::time::Duration;

const MS: Duration = Duration::from_millis(1);

fn parameter<T: std::fmt::Debug>(result: Result<T, InvalidConfig>) -> Parameter {
    result.unwrap_err().parameter()
}

#[test]
fn a_zero_limit_is_refused_by_every_constructor() {
    let clock = ManualClock::new();
    let origin = tower::service_fn(|x: u32| async move { Ok::<_, std::convert::Infallible>(x) });
    assert_eq!(parameter(Admission::wait(0)), Parameter::MaxInFlight);
    assert_eq!(parameter(Admission::shed(0)), Parameter::MaxInFlight);
    assert_eq!(
        parameter(Admission::new(0, Policy::queue(4, MS), clock.clone())),
        Parameter::MaxInFlight
    );
    assert_eq!(
        parameter(ConcurrencyLimit::new(origin, 0)),
        Parameter::MaxInFlight
    );
    assert_eq!(
        parameter(ConcurrencyLimitLayer::new(0)),
        Parameter::MaxInFlight
    );
    assert_eq!(
        parameter(ConcurrencyLimitLayer::shed(0)),
        Parameter::MaxInFlight
    );
    assert_eq!(
        parameter(ConcurrencyLimitLayer::with_policy(0, Policy::Shed, clock)),
        Parameter::MaxInFlight
    );
}

#[test]
fn a_zero_queue_timeout_is_refused_when_requests_may_wait() {
    let clock = ManualClock::new();
    let queue = ConcurrencyLimitLayer::new(6)
        .unwrap()
        .queue(12, Duration::ZERO);
    assert_eq!(parameter(queue), Parameter::QueueTimeout);
    let policy = Policy::queue(12, Duration::ZERO);
    assert_eq!(
        parameter(Admission::new(6, policy, clock.clone())),
        Parameter::QueueTimeout
    );
    assert_eq!(
        parameter(ConcurrencyLimitLayer::with_policy(6, policy, clock.clone())),
        Parameter::QueueTimeout
    );
    // The smallest positive timeout is fine.
    assert!(Admission::new(6, Policy::queue(12, Duration::from_nanos(1)), clock).is_ok());
}

#[test]
fn max_queue_zero_sheds_whatever_its_timeout_as_in_the_js_api() {
    let clock = ManualClock::new();
    let layer = ConcurrencyLimitLayer::new(6)
        .unwrap()
        .queue(0, Duration::ZERO)
        .unwrap()
        .clock(clock.clone());
    assert!(format!("{layer:?}").contains("max_queue: 0"));
    let admission = Admission::new(1, Policy::queue(0, Duration::ZERO), clock).unwrap();
    let _held = admission.try_admit().unwrap();
    let shed = futures::executor::block_on(admission.admit()).unwrap_err();
    assert!(shed.overloaded().is_some());
}

#[test]
fn the_error_names_the_parameter_in_its_message() {
    let zero = ConcurrencyLimitLayer::new(0).unwrap_err();
    assert_eq!(zero.to_string(), "max_in_flight must be at least 1, got 0");
    assert_eq!(zero.parameter().name(), "max_in_flight");
    let timeout = ConcurrencyLimitLayer::new(1)
        .unwrap()
        .queue(1, Duration::ZERO)
        .unwrap_err();
    assert!(timeout
        .to_string()
        .starts_with("timeout (the queue timeout) must be longer than zero"));
    assert_eq!(timeout.parameter().name(), "timeout");
    // A `BoxError` like every other edgeshed error, for `?` in `main`.
    let boxed: edgeshed::BoxError = timeout.into();
    assert!(boxed.is::<InvalidConfig>());
}

#[test]
fn named_builder_steps_build_the_same_limit_as_the_policy() {
    let clock = ManualClock::new();
    let origin = tower::service_fn(|x: u32| async move { Ok::<_, std::convert::Infallible>(x) });
    use tower_layer::Layer;
    let built = ConcurrencyLimitLayer::new(3)
        .unwrap()
        .queue(2, 7 * MS)
        .unwrap()
        .clock(clock.clone())
        .layer(origin);
    assert_eq!(built.admission().policy(), Policy::queue(2, 7 * MS));
    assert_eq!(built.admission().stats().limit, 3);
    let shed = ConcurrencyLimitLayer::new(3).unwrap().shed_when_full();
    assert!(format!("{shed:?}").contains("Shed"));
}
