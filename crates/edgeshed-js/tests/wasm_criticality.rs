//! The JS `Limiter`'s criticalities in Node and in headless Chromium
//! (`wasm-pack test --node` / `--headless --chrome`): the shed order of the
//! reserve, the queue's order and displacement from a full queue.
#![cfg(target_arch = "wasm32")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use edgeshed_js::Limiter;
use js_sys::{Array, Promise};
use support::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

/// `{ criticality }`.
fn of(criticality: &str) -> JsValue {
    options(&format!(r#"{{"criticality": "{criticality}"}}"#))
}

/// A criticality's counter in `stats().byCriticality`.
fn class_stat(limiter: &Limiter, criticality: &str, key: &str) -> f64 {
    get(
        &get(&get(&limiter.stats(), "byCriticality"), criticality),
        key,
    )
    .as_f64()
    .unwrap()
}

#[wasm_bindgen_test]
async fn sheddable_calls_are_shed_first_and_critical_ones_last() {
    let limiter = limiter(r#"{"maxInFlight": 10}"#);
    // A critical call first: seen, it keeps the reserve from being lent
    // (until one is seen, a limiter lends its reserve to lower ranks).
    outcome(run(&limiter, returning(&"c".into()), of("critical")))
        .await
        .unwrap();
    let gate = deferred();
    let log = Array::new();
    let mut held: Vec<Promise> = Vec::new();
    // Admitted while their criticality's share lasts (7 / 9 / 10), shed after.
    for (criticality, admitted) in [("sheddable", 7.0), ("default", 2.0), ("critical", 1.0)] {
        for _ in 0..12 {
            held.push(run(
                &limiter,
                gated(&gate, &log, criticality),
                of(criticality),
            ));
        }
        assert_eq!(
            class_stat(&limiter, criticality, "inFlight"),
            admitted,
            "{criticality}"
        );
        assert_eq!(
            class_stat(&limiter, criticality, "shed"),
            12.0 - admitted,
            "{criticality}"
        );
    }
    assert_eq!(stat(&limiter, "inFlight"), 10.0);
    call(&gate, "resolve", &[&JsValue::NULL]);
    let mut refused = 0;
    for promise in held {
        if let Err(error) = outcome(promise).await {
            assert_eq!(error_name(&error), "OverloadedError");
            assert_eq!(get(&error, "reason").as_string().unwrap(), "limit");
            refused += 1;
        }
    }
    assert_eq!(refused, 26);
    assert_eq!(log.length(), 10);
    assert_eq!(stat(&limiter, "inFlight"), 0.0);
}

#[wasm_bindgen_test]
async fn the_queue_serves_critical_calls_first_and_displaces_sheddable_ones() {
    let limiter = limiter(r#"{"maxInFlight": 1, "maxQueue": 2, "queueTimeoutMs": 60000}"#);
    let gate = deferred();
    let log = Array::new();
    let holder = run(&limiter, gated(&gate, &log, "holder"), JsValue::UNDEFINED);
    let sheddable = run(&limiter, returning(&"s".into()), of("sheddable"));
    let default = run(&limiter, gated(&gate, &log, "default"), of("default"));
    // The queue is full: the critical arrival displaces the sheddable waiter.
    let critical = run(&limiter, gated(&gate, &log, "critical"), of("critical"));
    let displaced = outcome(sheddable).await.unwrap_err();
    assert_eq!(error_name(&displaced), "OverloadedError");
    assert_eq!(get(&displaced, "reason").as_string().unwrap(), "displaced");
    assert_eq!(class_stat(&limiter, "sheddable", "displaced"), 1.0);
    assert_eq!(
        stat(&limiter, "inFlight"),
        1.0,
        "the displaced place frees no slot"
    );
    call(&gate, "resolve", &[&JsValue::NULL]);
    for promise in [holder, critical, default] {
        outcome(promise).await.unwrap();
    }
    let order: Vec<String> = log.iter().map(|name| name.as_string().unwrap()).collect();
    assert_eq!(order, ["holder", "critical", "default"]);
}
