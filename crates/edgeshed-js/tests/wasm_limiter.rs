//! The JS `Limiter`'s `run` driven by real JavaScript promises and timers,
//! in Node and in headless Chromium (`wasm-pack test --node` /
//! `--headless --chrome`): admission, queueing, deadlines, aborts.
#![cfg(target_arch = "wasm32")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use edgeshed_js::Limiter;
use js_sys::{Array, Promise, Reflect};
use support::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

#[wasm_bindgen_test]
async fn admits_up_to_the_limit_and_sheds_the_rest_when_max_queue_is_zero() {
    let limiter = limiter(r#"{"maxInFlight": 3}"#);
    let gate = deferred();
    let log = Array::new();
    let running: Vec<Promise> = (0..3)
        .map(|i| {
            run(
                &limiter,
                gated(&gate, &log, &format!("t{i}")),
                JsValue::UNDEFINED,
            )
        })
        .collect();
    let shed: Vec<Promise> = (0..2)
        .map(|_| run(&limiter, returning(&1.into()), JsValue::UNDEFINED))
        .collect();
    assert_eq!(stat(&limiter, "inFlight"), 3.0);
    assert_eq!(stat(&limiter, "queued"), 0.0);
    for promise in shed {
        let error = outcome(promise).await.unwrap_err();
        assert_eq!(error_name(&error), "OverloadedError");
        assert_eq!(get(&error, "status").as_f64(), Some(503.0));
    }
    assert_eq!(stat(&limiter, "shed"), 2.0);
    call(&gate, "resolve", &[&"done".into()]);
    for promise in running {
        assert_eq!(outcome(promise).await.unwrap(), "done");
    }
    assert_eq!(log.length(), 3);
    assert_eq!(stat(&limiter, "inFlight"), 0.0);
    assert_eq!(stat(&limiter, "admitted"), 3.0);
}

#[wasm_bindgen_test]
async fn queued_calls_run_in_fifo_order() {
    let limiter = limiter(r#"{"maxInFlight": 1, "maxQueue": 3, "queueTimeoutMs": 60000}"#);
    let log = Array::new();
    let gates: Vec<JsValue> = (0..4).map(|_| deferred()).collect();
    let calls: Vec<Promise> = gates
        .iter()
        .enumerate()
        .map(|(i, gate)| {
            run(
                &limiter,
                gated(gate, &log, &format!("c{i}")),
                JsValue::UNDEFINED,
            )
        })
        .collect();
    assert_eq!(stat(&limiter, "queued"), 3.0);
    for (i, gate) in gates.iter().enumerate() {
        flush().await;
        // Exactly one call has started per released gate, in arrival order.
        assert_eq!(log.length() as usize, i + 1);
        assert_eq!(log.get(i as u32).as_string().unwrap(), format!("c{i}"));
        call(gate, "resolve", &[&JsValue::from(i as f64)]);
    }
    for (i, promise) in calls.into_iter().enumerate() {
        assert_eq!(outcome(promise).await.unwrap().as_f64(), Some(i as f64));
    }
    assert_eq!(stat(&limiter, "queued"), 0.0);
    assert_eq!(stat(&limiter, "inFlight"), 0.0);
}

#[wasm_bindgen_test]
async fn queue_timeout_rejects_with_overloaded_and_leaves_no_waiter() {
    let limiter = limiter(r#"{"maxInFlight": 1, "maxQueue": 1, "queueTimeoutMs": 5}"#);
    let gate = deferred();
    let log = Array::new();
    let holder = run(&limiter, gated(&gate, &log, "holder"), JsValue::UNDEFINED);
    let waiter = run(&limiter, returning(&2.into()), JsValue::UNDEFINED);
    assert_eq!(stat(&limiter, "queued"), 1.0);
    let error = outcome(waiter).await.unwrap_err();
    assert_eq!(error_name(&error), "OverloadedError");
    assert_eq!(stat(&limiter, "queued"), 0.0);
    assert_eq!(stat(&limiter, "queueTimeouts"), 1.0);
    assert_eq!(stat(&limiter, "inFlight"), 1.0);
    call(&gate, "resolve", &[&JsValue::NULL]);
    outcome(holder).await.unwrap();
    assert_eq!(stat(&limiter, "inFlight"), 0.0);
}

#[wasm_bindgen_test]
async fn deadline_rejects_with_deadline_error_while_queued_and_while_running() {
    let limiter = limiter(r#"{"maxInFlight": 1, "maxQueue": 1, "queueTimeoutMs": 60000}"#);
    let gate = deferred();
    let log = Array::new();
    let running = run(&limiter, gated(&gate, &log, "slow"), with_deadline(300.0));
    let queued = run(&limiter, returning(&1.into()), with_deadline(2.0));
    let error = outcome(queued).await.unwrap_err();
    assert_eq!(error_name(&error), "DeadlineError");
    assert_eq!(get(&error, "status").as_f64(), Some(504.0));
    let error = outcome(running).await.unwrap_err();
    assert_eq!(error_name(&error), "DeadlineError");
    assert_eq!(stat(&limiter, "expired"), 2.0);
    // The caller was answered, but the work still runs: so the slot stays
    // taken until it settles (then it is counted as abandoned).
    assert_eq!(stat(&limiter, "inFlight"), 1.0);
    assert_eq!(stat(&limiter, "abandoned"), 1.0);
    call(&gate, "resolve", &[&JsValue::NULL]);
    flush().await;
    assert_eq!(stat(&limiter, "inFlight"), 0.0);
    assert_eq!(stat(&limiter, "queued"), 0.0);
}

#[wasm_bindgen_test]
async fn abort_removes_a_queued_waiter_and_releases_a_held_permit_when_its_work_settles() {
    let limiter = limiter(r#"{"maxInFlight": 1, "maxQueue": 1, "queueTimeoutMs": 60000}"#);
    let never = deferred(); // resolved only after the abort
    let log = Array::new();
    let holder_abort = abort_controller();
    let waiter_abort = abort_controller();
    let holder = run(
        &limiter,
        gated(&never, &log, "held"),
        with_signal(&holder_abort.signal()),
    );
    let waiter = run(
        &limiter,
        returning(&1.into()),
        with_signal(&waiter_abort.signal()),
    );
    assert_eq!(stat(&limiter, "queued"), 1.0);

    waiter_abort.abort_with_reason(&"left the queue".into());
    assert_eq!(outcome(waiter).await.unwrap_err(), "left the queue");
    assert_eq!(stat(&limiter, "queued"), 0.0);
    assert_eq!(stat(&limiter, "inFlight"), 1.0);

    holder_abort.abort_with_reason(&"gave up".into());
    assert_eq!(outcome(holder).await.unwrap_err(), "gave up");
    // Its fn ignores the signal and still runs: the slot is freed when it settles.
    assert_eq!(stat(&limiter, "inFlight"), 1.0);
    call(&never, "resolve", &[&JsValue::NULL]);
    flush().await;
    assert_eq!(stat(&limiter, "inFlight"), 0.0);

    // An already-aborted signal is refused before admission.
    let aborted = abort_controller();
    aborted.abort_with_reason(&"too late".into());
    let refused = run(
        &limiter,
        returning(&1.into()),
        with_signal(&aborted.signal()),
    );
    assert_eq!(outcome(refused).await.unwrap_err(), "too late");
    assert_eq!(stat(&limiter, "admitted"), 1.0);
}

#[wasm_bindgen_test]
async fn a_throwing_or_rejecting_fn_frees_its_permit_and_rejects_with_its_error() {
    let limiter = limiter(r#"{"maxInFlight": 1}"#);
    let thrown = outcome(run(&limiter, throwing("sync boom"), JsValue::UNDEFINED)).await;
    assert_eq!(get(&thrown.unwrap_err(), "message"), "sync boom");
    assert_eq!(stat(&limiter, "inFlight"), 0.0);
    let rejected = outcome(run(&limiter, rejecting("async boom"), JsValue::UNDEFINED)).await;
    assert_eq!(get(&rejected.unwrap_err(), "message"), "async boom");
    assert_eq!(stat(&limiter, "inFlight"), 0.0);
    let fine = outcome(run(&limiter, returning(&7.into()), JsValue::UNDEFINED)).await;
    assert_eq!(fine.unwrap().as_f64(), Some(7.0));
}

#[wasm_bindgen_test]
fn invalid_options_throw_type_or_range_errors_naming_the_option() {
    let cases: &[(&str, &str, &str)] = &[
        (r#"{"maxInflight": 3}"#, "TypeError", "maxInflight"),
        (r#"{}"#, "TypeError", "maxInFlight"),
        (r#"{"maxInFlight": "3"}"#, "TypeError", "maxInFlight"),
        (r#"{"maxInFlight": 0}"#, "RangeError", "maxInFlight"),
        (r#"{"maxInFlight": -1}"#, "RangeError", "maxInFlight"),
        (r#"{"maxInFlight": 1.5}"#, "RangeError", "maxInFlight"),
        (r#"{"maxInFlight": 1e12}"#, "RangeError", "maxInFlight"),
        (
            r#"{"maxInFlight": 1, "maxQueue": 2}"#,
            "TypeError",
            "queueTimeoutMs",
        ),
        (
            r#"{"maxInFlight": 1, "maxQueue": -2, "queueTimeoutMs": 5}"#,
            "RangeError",
            "maxQueue",
        ),
        (
            r#"{"maxInFlight": 1, "maxQueue": 2, "queueTimeoutMs": 0}"#,
            "RangeError",
            "queueTimeoutMs",
        ),
        (r#"null"#, "TypeError", "options"),
        (r#"7"#, "TypeError", "options"),
    ];
    for (json, kind, names) in cases {
        let error = Limiter::new(options(json)).err().unwrap();
        assert_eq!(error_name(&error), *kind, "{json}");
        let message = get(&error, "message").as_string().unwrap();
        assert!(message.contains(names), "{json}: {message}");
    }
    // NaN and Infinity cannot be written in JSON: build them directly.
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let object = js_sys::Object::new();
        Reflect::set(&object, &"maxInFlight".into(), &bad.into()).unwrap();
        let error = Limiter::new(object.into()).err().unwrap();
        assert_eq!(error_name(&error), "RangeError");
    }
    // The instance keeps working after all of that.
    let limiter = limiter(r#"{"maxInFlight": 1}"#);
    assert_eq!(stat(&limiter, "limit"), 1.0);
}

#[wasm_bindgen_test]
async fn a_returned_promise_that_cannot_be_adopted_rejects_and_frees_its_slot() {
    let limiter = limiter(r#"{"maxInFlight": 1, "maxQueue": 1, "queueTimeoutMs": 60000}"#);
    // Admitted at once, nothing to race: the synchronous fast path.
    let error = outcome(run(&limiter, hostile_promise("fast"), JsValue::UNDEFINED))
        .await
        .unwrap_err();
    assert_eq!(get(&error, "message").as_string().unwrap(), "fast");
    assert_eq!(stat(&limiter, "inFlight"), 0.0);
    // With a deadline: through the executor.
    let error = outcome(run(
        &limiter,
        hostile_promise("raced"),
        with_deadline(60_000.0),
    ))
    .await
    .unwrap_err();
    assert_eq!(get(&error, "message").as_string().unwrap(), "raced");
    assert_eq!(stat(&limiter, "inFlight"), 0.0);
    // Queued first, then admitted by a hand-off.
    let gate = deferred();
    let log = Array::new();
    let holder = run(&limiter, gated(&gate, &log, "holder"), JsValue::UNDEFINED);
    let queued = run(&limiter, hostile_promise("queued"), JsValue::UNDEFINED);
    assert_eq!(stat(&limiter, "queued"), 1.0);
    call(&gate, "resolve", &[&JsValue::NULL]);
    outcome(holder).await.unwrap();
    let error = outcome(queued).await.unwrap_err();
    assert_eq!(get(&error, "message").as_string().unwrap(), "queued");
    assert_eq!(stat(&limiter, "inFlight"), 0.0);
    assert_eq!(stat(&limiter, "queued"), 0.0);
    // The instance keeps working.
    let value = outcome(run(&limiter, returning(&5.into()), JsValue::UNDEFINED)).await;
    assert_eq!(value.unwrap(), 5);
}
