#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! The GCRA rate limit on the manual clock: burst, steady rate and
//! Retry-After; lossless eviction of recovered keys, and the overflow
//! allowance of a full table (more in tests/rate_table.rs); the tower layer
//! (shed, and wait with a bound); and the limit inside an `Admission`.

mod support;

use edgeshed::admission::{Admission, AdmitError, Call, Options, Policy};
use edgeshed::error::{RateLimitReason, RateLimited};
use edgeshed::rate_limit::{Rate, RateLimitLayer, RateLimiter};
use edgeshed::time::{Clock, ManualClock};
use edgeshed::Key;
use std::task::Poll;
use std::time::Duration;
use support::{downcast, poll_once};
use tower::ServiceExt;
use tower_layer::Layer;

const MS: Duration = Duration::from_millis(1);

fn limiter(rate: Rate) -> (RateLimiter<ManualClock>, ManualClock) {
    let clock = ManualClock::new();
    (RateLimiter::new(rate, clock.clone()), clock)
}

#[test]
fn a_key_gets_its_burst_at_once_then_the_steady_rate_with_retry_after_to_the_next_turn() {
    let (limiter, clock) = limiter(Rate::per_second(10).unwrap().with_burst(3).unwrap());
    let key = Key::from("k");
    let remaining: Vec<u64> = (0..3)
        .map(|_| limiter.check_key(&key).unwrap().remaining())
        .collect();
    assert_eq!(remaining, [2, 1, 0]);
    let refused = limiter.check_key(&key).unwrap_err();
    assert_eq!(refused.reason(), RateLimitReason::Rate);
    assert_eq!(
        refused.retry_after(),
        Some(100 * MS),
        "one interval (1 s / 10)"
    );
    clock.advance(40 * MS);
    assert_eq!(
        limiter.check_key(&key).unwrap_err().retry_after(),
        Some(60 * MS)
    );
    clock.advance(60 * MS);
    let allowed = limiter.check_key(&key).unwrap();
    assert_eq!((allowed.remaining(), allowed.reset()), (0, 300 * MS));
    // Steady: exactly one call per 100 ms from now on, over 10 simulated seconds.
    let mut allowed_calls = 0;
    for _ in 0..1_000 {
        clock.advance(10 * MS);
        allowed_calls += u32::from(limiter.check_key(&key).is_ok());
    }
    assert_eq!(allowed_calls, 100);
    // Quiet for the whole burst window: the full burst again.
    clock.advance(300 * MS);
    assert_eq!(limiter.check_key(&key).unwrap().remaining(), 2);
    let stats = limiter.stats();
    assert_eq!((stats.allowed, stats.keys), (105, 1));
}

#[test]
fn per_minute_rates_and_unkeyed_calls_share_one_allowance() {
    let (limiter, clock) = limiter(Rate::per_minute(2).unwrap().with_burst(1).unwrap());
    assert!(limiter.check().is_ok());
    assert_eq!(
        limiter.check().unwrap_err().retry_after(),
        Some(Duration::from_secs(30))
    );
    clock.advance(Duration::from_secs(30));
    assert!(limiter.check().is_ok());
    assert!(
        limiter.check_key(&Key::from("a")).is_ok(),
        "a key has its own allowance"
    );
    assert_eq!(
        limiter.stats().keys,
        1,
        "the unkeyed allowance is not a key"
    );
}

#[test]
fn a_limited_key_is_never_refreshed_by_churn_through_ten_times_max_keys_other_keys() {
    const MAX_KEYS: usize = 10;
    let rate = Rate::per_second(1)
        .unwrap()
        .with_burst(1)
        .unwrap()
        .with_max_keys(MAX_KEYS)
        .unwrap();
    let (limiter, clock) = limiter(rate);
    let victim = Key::from("victim");
    let mut last_allowed = None;
    let mut churned = 0;
    let mut churn_refused = 0;
    // 20 simulated seconds; every 10 ms the victim tries, and a new key arrives.
    for step in 0..2_000u64 {
        let now = clock.now();
        if limiter.check_key(&victim).is_ok() {
            if let Some(before) = last_allowed {
                assert!(
                    now.saturating_duration_since(before) >= Duration::from_secs(1),
                    "the victim got a fresh allowance at step {step}"
                );
            }
            last_allowed = Some(now);
        }
        let newcomer = Key::from(format!("churn-{step}"));
        match limiter.check_key(&newcomer) {
            Ok(_) => churned += 1,
            Err(refused) => {
                churn_refused += 1;
                assert!(refused.retry_after().unwrap() <= Duration::from_secs(1));
            }
        }
        assert!(limiter.stats().keys <= MAX_KEYS);
        clock.advance(10 * MS);
    }
    assert!(
        churned >= 10 * MAX_KEYS,
        "{churned} keys went through the table"
    );
    let stats = limiter.stats();
    assert_eq!(
        stats.keys_refused, churn_refused,
        "every refused new key is counted"
    );
    assert!(
        churn_refused > 0,
        "the table was full of limited keys at times"
    );
    assert_eq!(
        stats.limited,
        stats.keys_refused + (2_000 - 20),
        "the victim: 20 of 2000 allowed"
    );
}

#[test]
fn a_full_table_of_limited_keys_puts_new_keys_on_one_shared_overflow_allowance() {
    let rate = Rate::per_second(1)
        .unwrap()
        .with_burst(1)
        .unwrap()
        .with_max_keys(2)
        .unwrap();
    let (limiter, clock) = limiter(rate);
    assert!(limiter.check_key(&Key::from("a")).is_ok());
    clock.advance(300 * MS);
    assert!(limiter.check_key(&Key::from("b")).is_ok());
    assert!(
        limiter.check_key(&Key::from("c")).is_ok(),
        "the overflow allowance's turn"
    );
    let refused = limiter.check_key(&Key::from("d")).unwrap_err();
    assert_eq!(
        refused.retry_after(),
        Some(1_000 * MS),
        "the overflow allowance's next turn"
    );
    assert!(
        limiter.check_key(&Key::from("a")).is_err(),
        "'a' is still limited"
    );
    clock.advance(700 * MS);
    // 'a' recovered and made room, but 'd' starts from the overflow
    // allowance's state while that is still limited (until 1.3 s).
    assert_eq!(
        limiter
            .check_key(&Key::from("d"))
            .unwrap_err()
            .retry_after(),
        Some(300 * MS)
    );
    assert!(
        limiter.check_key(&Key::from("b")).is_err(),
        "'b' kept its state"
    );
    clock.advance(300 * MS);
    assert!(limiter.check_key(&Key::from("d")).is_ok());
    let stats = limiter.stats();
    assert_eq!(
        (
            stats.keys,
            stats.overflow,
            stats.keys_refused,
            stats.limited
        ),
        (2, 2, 2, 4)
    );
}

#[test]
fn the_layer_sheds_with_retry_after_or_waits_for_the_turn_and_gives_it_back_when_dropped() {
    let clock = ManualClock::new();
    let echo = tower::service_fn(|x: u32| std::future::ready(Ok::<_, std::convert::Infallible>(x)));
    let shed = RateLimitLayer::new(RateLimiter::new(
        Rate::per_second(10).unwrap().with_burst(1).unwrap(),
        clock.clone(),
    ))
    .layer(echo);
    assert_eq!(
        futures::executor::block_on(shed.clone().oneshot(1)).unwrap(),
        1
    );
    let error = futures::executor::block_on(shed.clone().oneshot(2)).unwrap_err();
    assert_eq!(
        downcast::<RateLimited>(&error).retry_after(),
        Some(100 * MS)
    );

    let limiter = RateLimiter::new(
        Rate::per_second(10).unwrap().with_burst(1).unwrap(),
        clock.clone(),
    );
    let wait = RateLimitLayer::new(limiter.clone())
        .wait_at_most(150 * MS)
        .unwrap()
        .layer(echo);
    assert!(matches!(
        poll_once(&mut wait.clone().oneshot(1)),
        Poll::Ready(Ok(1))
    ));
    let mut second = wait.clone().oneshot(2); // its turn: in 100 ms
    assert!(poll_once(&mut second).is_pending());
    let mut third = wait.clone().oneshot(3); // in 200 ms: over the bound
    let error = match poll_once(&mut third) {
        Poll::Ready(Err(error)) => error,
        other => panic!("expected a refusal, got {other:?}"),
    };
    assert_eq!(
        downcast::<RateLimited>(&error).retry_after(),
        Some(200 * MS)
    );
    let mut fourth = wait.clone().oneshot(4); // in 200 ms too: refused as well
    assert!(matches!(poll_once(&mut fourth), Poll::Ready(Err(_))));
    drop(second); // gives its turn back
    let mut fifth = wait.clone().oneshot(5);
    assert!(
        poll_once(&mut fifth).is_pending(),
        "it took the turn given back"
    );
    clock.advance(99 * MS);
    assert!(poll_once(&mut fifth).is_pending());
    clock.advance(MS);
    assert!(matches!(poll_once(&mut fifth), Poll::Ready(Ok(5))));
    assert_eq!(limiter.stats().allowed, 2);
}

#[test]
fn an_admission_checks_the_rate_before_the_limit_and_counts_429s() {
    let clock = ManualClock::new();
    let options = Options::new().rate(Rate::per_second(1).unwrap().with_burst(2).unwrap());
    let admission = Admission::with_options(1, Policy::Shed, options, clock.clone()).unwrap();
    let call = || Call::default().with_key("tenant");
    let held = futures::executor::block_on(admission.admit_call(call())).unwrap();
    let shed = futures::executor::block_on(admission.admit_call(call())).unwrap_err();
    assert!(
        shed.overloaded().is_some(),
        "within its rate, over the limit: 503"
    );
    let limited = futures::executor::block_on(admission.admit_call(call())).unwrap_err();
    let AdmitError::RateLimited(limited) = limited else {
        panic!("expected a 429, got {limited:?}")
    };
    assert_eq!(
        (limited.reason().as_str(), limited.retry_after()),
        ("rate", Some(Duration::from_secs(1)))
    );
    assert!(
        admission.try_admit().is_none(),
        "try_admit never skips the rate limit"
    );
    let stats = admission.stats();
    assert_eq!((stats.admitted, stats.shed, stats.rate_limited), (1, 1, 1));
    drop(held);
}
