//! The pure pieces of criticality, fairness and rate limits in the gateway
//! (DESIGN, "Criticality, fairness and rate limits"; "Worker HTTP
//! behaviour"): the criticality header, request keys, the 429 and 503
//! `displaced` answers and the RateLimit headers (natively; what the stats
//! and metrics add: route_metrics.rs).
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]

use core::time::Duration;
use edgeshed::admission::{Admission, Call, Criticality, Policy};
use edgeshed::error::RateLimited;
use edgeshed::rate_limit::Rate;
use edgeshed::time::ManualClock;
use edgeshed::Key;
use edgeshed_worker::classify::{criticality, key};
use edgeshed_worker::failure::{Failure, Refusal, Scope};
use edgeshed_worker::rate_headers;
use serde_json::{json, Value};

/// Every route criticality with every header value: never above the
/// route's, lowered to what the header names, the route's when the header
/// is absent or unknown.
#[test]
fn the_header_lowers_and_never_raises() {
    use Criticality::{Critical, Default, Sheddable};
    for route in Criticality::ALL {
        assert_eq!(criticality(route, None), route);
        for junk in ["", "urgent", "CRITICAL_PLUS", "1"] {
            assert_eq!(criticality(route, Some(junk)), route, "{junk:?}");
        }
        for asked in Criticality::ALL {
            let got = criticality(route, Some(asked.as_str()));
            assert!(got <= route, "{asked} raised {route} to {got}");
            assert_eq!(got, route.min(asked));
        }
    }
    assert_eq!(criticality(Critical, Some(" Sheddable\t")), Sheddable);
    assert_eq!(criticality(Sheddable, Some("critical")), Sheddable);
    assert_eq!(criticality(Default, Some("DEFAULT")), Default);
}

#[test]
fn keys_are_trimmed_whole_and_absent_when_blank() {
    assert_eq!(key(None), None);
    assert_eq!(key(Some("  \t")), None);
    assert_eq!(key(Some(" 192.0.2.1 ")), Some(Key::from("192.0.2.1")));
    assert_eq!(key(Some(" 192.0.2.1 ")).unwrap().shown(), "192.0.2.1");
    // Two JWT-like values sharing their first 300 bytes are two keys (the
    // old 256-byte cut merged them into one).
    let jwt = |user: &str| format!("Bearer eyJ{}.{user}", "A".repeat(300));
    assert_ne!(key(Some(&jwt("alice"))), key(Some(&jwt("mallory"))));
    assert_eq!(key(Some(&jwt("alice"))), key(Some(&jwt("alice"))));
    // A 16 KiB value costs what a short one does.
    let huge = key(Some(&"k".repeat(16 * 1024))).unwrap();
    assert_eq!(std::mem::size_of_val(&huge), std::mem::size_of::<Key>());
    assert_eq!(huge.shown(), "k".repeat(Key::SHOWN_BYTES));
}

fn answer(failure: Failure, scope: Scope<'_>, route: &str) -> (u16, Value, bool, u32) {
    let answer = failure.answer(failure.scope_in(scope, route));
    let body = serde_json::from_str(&answer.body).unwrap();
    (
        answer.status,
        body,
        answer.retry_after,
        failure.retry_after_seconds(7),
    )
}

// | a key over its fair share, or over its rate limit | 429 | Retry-After;
// {"error":"rate_limited","scope":"route:<path or prefix>","reason":"fair_share" | "rate"} |
#[test]
fn over_the_rate_or_the_fair_share_is_429_scoped_to_the_route() {
    let rate = Failure::RateLimited(RateLimited::rate(Duration::from_millis(2001)));
    for scope in [Scope::Global, Scope::Origin("users"), Scope::Route("/api/")] {
        assert_eq!(
            answer(rate, scope, "/api/"),
            (
                429,
                json!({"error": "rate_limited", "scope": "route:/api/", "reason": "rate"}),
                true,
                3
            )
        );
    }
    let fair = Failure::RateLimited(RateLimited::fair_share());
    assert_eq!(
        answer(fair, Scope::Origin("users"), "/aggregate"),
        (
            429,
            json!({"error": "rate_limited", "scope": "route:/aggregate", "reason": "fair_share"}),
            true,
            7
        ),
        "no time is known for a fair share: retryAfterSeconds"
    );
    let soon = Failure::RateLimited(RateLimited::rate(Duration::from_millis(1)));
    assert_eq!(soon.retry_after_seconds(7), 1, "rounded up, at least 1");
    // Other failures keep their own scope and the configured Retry-After.
    let limit = Failure::Overloaded(Refusal::Limit);
    assert_eq!(
        answer(limit, Scope::Origin("users"), "/api/").1["scope"],
        "origin:users"
    );
    assert_eq!(limit.retry_after_seconds(7), 7);
}

/// The core's refusals map onto the table: a displaced waiter is 503
/// `displaced`, a key over its fair share 429 `fair_share`, a passed
/// deadline 504.
#[test]
fn admission_errors_map_to_their_failure() {
    let clock = ManualClock::new();
    let policy = Policy::queue(1, Duration::from_secs(10));
    let admission = Admission::new(1, policy, clock.clone()).unwrap();
    let _held = futures_util::FutureExt::now_or_never(
        admission.admit_call(Call::new(Criticality::Critical)),
    )
    .unwrap()
    .unwrap();
    let mut waiter = Box::pin(admission.admit_call(Call::new(Criticality::Sheddable)));
    assert!(futures_util::FutureExt::now_or_never(waiter.as_mut()).is_none());
    let mut critical = Box::pin(admission.admit_call(Call::new(Criticality::Critical)));
    assert!(futures_util::FutureExt::now_or_never(critical.as_mut()).is_none());
    let displaced = futures_util::FutureExt::now_or_never(waiter)
        .unwrap()
        .unwrap_err();
    let failure = Failure::of_admission(&displaced);
    assert_eq!(failure, Failure::Overloaded(Refusal::Displaced));
    assert_eq!(
        answer(failure, Scope::Origin("users"), "/x").1,
        json!({"error": "overloaded", "scope": "origin:users", "reason": "displaced"})
    );

    // Limit 2: a holds both slots while b waits, so a is over its share
    // (one slot; a share is rounded up, a key may always hold one).
    let keyed =
        Admission::new(2, Policy::queue(4, Duration::from_secs(10)), clock.clone()).unwrap();
    let admit = |key: &str| {
        futures_util::FutureExt::now_or_never(keyed.admit_call(Call::default().with_key(key)))
    };
    let _a = [admit("a").unwrap().unwrap(), admit("a").unwrap().unwrap()];
    let mut b = Box::pin(keyed.admit_call(Call::default().with_key("b")));
    assert!(futures_util::FutureExt::now_or_never(b.as_mut()).is_none());
    let over = admit("a").unwrap().unwrap_err();
    assert_eq!(
        Failure::of_admission(&over),
        Failure::RateLimited(RateLimited::fair_share())
    );
}

#[test]
fn rate_limit_headers_describe_the_gcra() {
    let rate = Rate::per_second(10).unwrap().with_burst(20).unwrap();
    assert_eq!(rate_headers::policy(&rate), r#""edgeshed";q=20;w=2"#);
    let slow = Rate::per_minute(1).unwrap().with_burst(2).unwrap();
    assert_eq!(rate_headers::policy(&slow), r#""edgeshed";q=2;w=120"#);
    let fast = Rate::per_second(1000).unwrap().with_burst(1).unwrap();
    assert_eq!(
        rate_headers::policy(&fast),
        r#""edgeshed";q=1;w=1"#,
        "w is at least 1"
    );
    assert_eq!(
        rate_headers::current(3, Duration::from_millis(1001)),
        r#""edgeshed";r=3;t=2"#
    );
}
