//! The JS `Limiter`'s `fetch`: the slot is held until the response body is
//! done (Node and headless Chromium, with a stubbed `fetch`).
#![cfg(target_arch = "wasm32")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use js_sys::Promise;
use support::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

#[wasm_bindgen_test]
async fn fetch_holds_the_permit_until_the_body_is_read_to_the_end() {
    let controllers = install_fetch_stub();
    let limiter = limiter(r#"{"maxInFlight": 1}"#);
    let response = outcome(fetch(
        &limiter,
        "https://origin.test/a".into(),
        JsValue::UNDEFINED,
    ))
    .await
    .unwrap();
    // Headers are in, the body is not: the slot is still taken.
    assert_eq!(stat(&limiter, "inFlight"), 1.0);
    let shed = outcome(run(&limiter, returning(&1.into()), JsValue::UNDEFINED)).await;
    assert_eq!(error_name(&shed.unwrap_err()), "OverloadedError");

    let body = read_all(&response);
    let controller = controllers.get(0);
    call(&controller, "enqueue", &[&chunk("hello ")]);
    flush().await;
    assert_eq!(stat(&limiter, "inFlight"), 1.0);
    call(&controller, "enqueue", &[&chunk("world")]);
    call(&controller, "close", &[]);
    assert_eq!(JsFuture::from(body).await.unwrap(), "hello world");
    assert_eq!(stat(&limiter, "inFlight"), 0.0);
}

#[wasm_bindgen_test]
async fn fetch_frees_the_permit_when_the_body_is_cancelled_or_absent() {
    install_fetch_stub();
    let limiter = limiter(r#"{"maxInFlight": 1}"#);
    let response = outcome(fetch(
        &limiter,
        "https://origin.test/b".into(),
        JsValue::UNDEFINED,
    ))
    .await
    .unwrap();
    assert_eq!(stat(&limiter, "inFlight"), 1.0);
    let body = get(&response, "body");
    JsFuture::from(Promise::from(call(
        &body,
        "cancel",
        &[&"not needed".into()],
    )))
    .await
    .unwrap();
    assert_eq!(stat(&limiter, "inFlight"), 0.0);

    install_empty_fetch_stub();
    let response = outcome(fetch(
        &limiter,
        "https://origin.test/c".into(),
        JsValue::UNDEFINED,
    ))
    .await
    .unwrap();
    assert_eq!(get(&response, "status").as_f64(), Some(204.0));
    assert_eq!(stat(&limiter, "inFlight"), 0.0);
}

#[wasm_bindgen_test]
async fn fetch_keeps_the_permit_of_a_body_that_arrived_whole_but_is_unread() {
    // The body is piped into a stream that lets a chunk through only when it
    // is read: a buffering one would take this small body whole, end its
    // pipe and free the slot with nothing read.
    let controllers = install_fetch_stub();
    let limiter = limiter(r#"{"maxInFlight": 1}"#);
    let response = outcome(fetch(
        &limiter,
        "https://origin.test/d".into(),
        JsValue::UNDEFINED,
    ))
    .await
    .unwrap();
    let controller = controllers.get(0);
    call(&controller, "enqueue", &[&chunk("small")]);
    call(&controller, "close", &[]);
    for _ in 0..5 {
        flush().await;
    }
    assert_eq!(stat(&limiter, "inFlight"), 1.0, "held while unread");
    assert_eq!(stat(&limiter, "heldBodies"), 1.0);
    assert_eq!(JsFuture::from(read_all(&response)).await.unwrap(), "small");
    assert_eq!(stat(&limiter, "inFlight"), 0.0);
    assert_eq!(stat(&limiter, "heldBodies"), 0.0);
}
