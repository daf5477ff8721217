//! The failure → status table (src/failure.rs) against the design contract's "Worker
//! HTTP behaviour" table, row by row. Every route kind (fan-out, prefix)
//! answers its failures through this one table.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]

use edgeshed_worker::failure::{Answer, Failure, Refusal, Scope};
use serde_json::{json, Value};

fn answer(failure: Failure, scope: Scope<'_>) -> (u16, Value, bool) {
    let Answer {
        status,
        body,
        retry_after,
    } = failure.answer(scope);
    (status, serde_json::from_str(&body).unwrap(), retry_after)
}

// | global or a required origin over capacity (shed or queue timeout) | 503 |
// `Retry-After`; {"error":"overloaded","scope":"global"} or "scope":"origin:users",
// plus "reason": "limit" | "queue_timeout" | "budget" | "displaced" |
#[test]
fn over_capacity_is_503_overloaded_with_scope_reason_and_retry_after() {
    for (refusal, reason) in [
        (Refusal::Limit, "limit"),
        (Refusal::QueueTimeout, "queue_timeout"),
        (Refusal::Budget, "budget"),
    ] {
        assert_eq!(
            answer(Failure::Overloaded(refusal), Scope::Global),
            (
                503,
                json!({"error": "overloaded", "scope": "global", "reason": reason}),
                true
            )
        );
        assert_eq!(
            answer(Failure::Overloaded(refusal), Scope::Origin("users")),
            (
                503,
                json!({"error": "overloaded", "scope": "origin:users", "reason": reason}),
                true
            )
        );
    }
}

// | deadline passed before a required origin answered | 504 | {"error":"deadline"} |
#[test]
fn a_passed_deadline_is_504_deadline_wherever_it_passed() {
    for scope in [Scope::Global, Scope::Origin("users")] {
        assert_eq!(
            answer(Failure::Deadline, scope),
            (504, json!({"error": "deadline"}), false)
        );
    }
}

// | a required origin's own timeoutMs passed first | 504 | {"error":"timeout","origin":"users"} |
#[test]
fn an_origin_timeout_is_504_timeout_naming_the_origin() {
    assert_eq!(
        answer(Failure::Timeout, Scope::Origin("users")),
        (504, json!({"error": "timeout", "origin": "users"}), false)
    );
}

// | required origin unreachable, reset, or answered non-2xx | 502 |
// {"error":"bad_gateway","origin":"users"} (plus "status": <origin status> when it answered) |
#[test]
fn an_unreachable_or_failing_origin_is_502_bad_gateway() {
    assert_eq!(
        answer(Failure::Unreachable, Scope::Origin("users")),
        (
            502,
            json!({"error": "bad_gateway", "origin": "users"}),
            false
        )
    );
    // (and on a prefix route, a status it cannot relay: 101, 600, 999)
    for status in [404, 500, 503, 101, 600, 999] {
        assert_eq!(
            answer(Failure::Status(status), Scope::Origin("users")),
            (
                502,
                json!({"error": "bad_gateway", "origin": "users", "status": status}),
                false
            )
        );
    }
    // docs/gateway.md: a body over `maxBodyBytes`
    assert_eq!(
        answer(Failure::TooLarge, Scope::Origin("users")),
        (
            502,
            json!({"error": "bad_gateway", "origin": "users", "reason": "body_too_large"}),
            false
        )
    );
}

#[test]
fn origin_names_are_json_escaped() {
    let (_, body, _) = answer(Failure::Status(500), Scope::Origin("a\"b"));
    assert_eq!(body["origin"], "a\"b");
    let (_, body, _) = answer(Failure::Overloaded(Refusal::Limit), Scope::Origin("a\"b"));
    assert_eq!(body["scope"], "origin:a\"b");
}
