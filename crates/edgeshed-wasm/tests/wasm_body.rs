//! `edgeshed_wasm::body`: a response body that holds a permit until it is
//! done, with a response made in JavaScript (`wasm-pack test --node` /
//! `--headless --chrome`).
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use edgeshed::semaphore::Semaphore;
use edgeshed_wasm::body::{Hold, Holder};
use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen(inline_js = r#"
export function response(text, close) {
  const body = new ReadableStream({
    start(c) {
      c.enqueue(new TextEncoder().encode(text));
      if (close) c.close();
    },
  });
  return new Response(body, { status: 200, headers: { "x-kept": "yes" } });
}
export function empty() { return new Response(null, { status: 204 }); }
export function text(response) { return response.text(); }
export function failure(response) {
  // The bodies' timers do not keep Node.js alive (unref): this one does.
  const alive = setInterval(() => {}, 1000);
  // A reader (text() in Chromium rejects with its own TypeError instead).
  const reader = response.body.getReader();
  const drain = () => reader.read().then(({ done }) => (done ? "read" : drain()));
  return drain().catch((e) => e.message).finally(() => clearInterval(alive));
}
export function turns(n) { return new Promise((r) => setTimeout(r, n)); }
export function header(response) { return response.headers.get("x-kept"); }
export function idleReason() { return (ms) => new Error(`idle ${ms}`); }
"#)]
extern "C" {
    fn response(text: &str, close: bool) -> JsValue;
    fn empty() -> JsValue;
    fn text(response: &JsValue) -> Promise;
    fn failure(response: &JsValue) -> Promise;
    fn turns(ms: f64) -> Promise;
    fn header(response: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = idleReason)]
    fn idle_reason() -> JsValue;
}

async fn wait(ms: f64) {
    JsFuture::from(turns(ms)).await.unwrap();
}

#[wasm_bindgen_test]
async fn an_unread_body_keeps_its_permit_and_reading_it_to_the_end_frees_it() {
    let semaphore = Semaphore::new(1);
    let holder = Holder::new();
    let hold = Hold {
        idle_ms: 60_000,
        host: &JsValue::UNDEFINED,
        idle_reason: &JsValue::UNDEFINED,
    };
    let permit = semaphore.try_acquire().unwrap();
    let held = holder
        .hold_response(&response("whole", true), permit, &hold)
        .unwrap();
    assert_eq!(header(&held), "yes");
    wait(20.0).await;
    assert_eq!(semaphore.available_permits(), 0, "held while unread");
    assert_eq!(holder.held_bodies(), 1.0);
    assert_eq!(JsFuture::from(text(&held)).await.unwrap(), "whole");
    assert_eq!(semaphore.available_permits(), 1);
    assert_eq!(holder.held_bodies(), 0.0);
    assert_eq!(holder.idle_timeouts(), 0.0);
}

#[wasm_bindgen_test]
async fn a_body_no_chunk_moves_through_is_cut_after_its_idle_timeout() {
    let semaphore = Semaphore::new(2);
    let holder = Holder::new();
    let reason = idle_reason();
    let hold = Hold {
        idle_ms: 30,
        host: &JsValue::UNDEFINED,
        idle_reason: &reason,
    };
    // One the consumer never reads, one whose origin goes silent.
    let [unread, silent] = [("never read", true), ("then silence", false)].map(|(text, ends)| {
        holder
            .hold_response(
                &response(text, ends),
                semaphore.try_acquire().unwrap(),
                &hold,
            )
            .unwrap()
    });
    let read = failure(&silent);
    assert_eq!(JsFuture::from(read).await.unwrap(), "idle 30");
    wait(60.0).await;
    holder.sweep();
    assert_eq!(semaphore.available_permits(), 2);
    assert_eq!(holder.held_bodies(), 0.0);
    assert_eq!(holder.idle_timeouts(), 2.0);
    assert_eq!(JsFuture::from(failure(&unread)).await.unwrap(), "idle 30");
}

#[wasm_bindgen_test]
fn a_response_without_a_body_frees_its_permit_at_once() {
    let semaphore = Semaphore::new(1);
    let holder = Holder::new();
    let hold = Hold {
        idle_ms: 60_000,
        host: &JsValue::UNDEFINED,
        idle_reason: &JsValue::UNDEFINED,
    };
    let none = empty();
    let held = holder
        .hold_response(&none, semaphore.try_acquire().unwrap(), &hold)
        .unwrap();
    assert_eq!(held, none);
    assert_eq!(semaphore.available_permits(), 1);
    let body = holder
        .hold_body(&empty(), semaphore.try_acquire().unwrap(), &hold)
        .unwrap();
    assert!(body.is_none());
    assert_eq!(semaphore.available_permits(), 1);
    assert_eq!(holder.held_bodies(), 0.0);
}
