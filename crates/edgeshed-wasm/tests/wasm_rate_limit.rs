//! edgeshed's GCRA rate limit and its tower layer on wasm32, timed by
//! `JsClock` (`performance.now()` and `setTimeout`): where tower's
//! `RateLimit` panics, because it reads tokio's `Instant::now()`
//! (`wasm-pack test --node` / `--headless --chrome`).
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use core::convert::Infallible;
use core::future::{poll_fn, Ready};
use core::task::{Context, Poll};
use core::time::Duration;
use edgeshed::admission::Call;
use edgeshed::error::{BoxError, RateLimitReason, RateLimited};
use edgeshed::rate_limit::{Rate, RateLimitLayer, RateLimiter};
use edgeshed::time::Clock;
use edgeshed_wasm::JsClock;
use tower_layer::Layer;
use tower_service::Service;
use wasm_bindgen_test::wasm_bindgen_test;

/// Answers with the tenant it was called for.
#[derive(Clone)]
struct Echo;

impl Service<&'static str> for Echo {
    type Response = &'static str;
    type Error = Infallible;
    type Future = Ready<Result<&'static str, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, tenant: &'static str) -> Self::Future {
        core::future::ready(Ok(tenant))
    }
}

async fn call<S>(svc: &mut S, tenant: &'static str) -> Result<&'static str, BoxError>
where
    S: Service<&'static str, Response = &'static str, Error = BoxError>,
{
    poll_fn(|cx| svc.poll_ready(cx)).await?;
    svc.call(tenant).await
}

fn by_tenant(tenant: &&'static str) -> Call {
    Call::default().with_key(*tenant)
}

#[wasm_bindgen_test]
async fn the_rate_limit_layer_sheds_per_key_on_the_js_clock() {
    let limiter = RateLimiter::new(
        Rate::per_second(10).unwrap().with_burst(2).unwrap(),
        JsClock,
    );
    let mut svc = RateLimitLayer::new(limiter.clone())
        .read_call_with(by_tenant)
        .layer(Echo);
    assert_eq!(call(&mut svc, "a").await.unwrap(), "a");
    assert_eq!(call(&mut svc, "a").await.unwrap(), "a");
    let error = call(&mut svc, "a").await.unwrap_err();
    let limited = error.downcast_ref::<RateLimited>().expect("a 429");
    assert_eq!(limited.reason(), RateLimitReason::Rate);
    let retry = limited.retry_after().expect("a Retry-After");
    assert!(
        retry > Duration::ZERO && retry <= Duration::from_millis(200),
        "{retry:?}"
    );
    assert_eq!(
        call(&mut svc, "b").await.unwrap(),
        "b",
        "another key has its own allowance"
    );
    let stats = limiter.stats();
    assert_eq!((stats.allowed, stats.limited, stats.keys), (3, 1, 2));
}

#[wasm_bindgen_test]
async fn the_rate_limit_layer_waits_for_the_turn_on_a_js_timer() {
    let clock = JsClock;
    let limiter = RateLimiter::new(Rate::per_second(20).unwrap().with_burst(1).unwrap(), clock);
    let mut svc = RateLimitLayer::new(limiter)
        .wait_at_most(Duration::from_millis(500))
        .unwrap()
        .read_call_with(by_tenant)
        .layer(Echo);
    let start = clock.now();
    assert_eq!(call(&mut svc, "a").await.unwrap(), "a");
    // The next turn is 50 ms away: the call waits for it on setTimeout.
    assert_eq!(call(&mut svc, "a").await.unwrap(), "a");
    let waited = clock.now().saturating_duration_since(start);
    assert!(
        waited >= Duration::from_millis(45),
        "the second call waited only {waited:?}"
    );
}
