//! Careless callers of the JS `Limiter`, in Node and headless Chromium: a
//! call nested in another limiter's `fn` keeps its own timers, and a call
//! whose caller gave up keeps its slot until its work really ends.
#![cfg(target_arch = "wasm32")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use edgeshed_js::Limiter;
use js_sys::{Function, Promise, Reflect};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

#[wasm_bindgen(inline_js = r#"
export function options(json) { return JSON.parse(json); }
export function settleWithin(promise, ms) {
  // `{ ok, value | error }`, or `{ pending: true }` if still pending after `ms`.
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ pending: true }), ms);
    promise.then(
      (value) => { clearTimeout(timer); resolve({ ok: true, value }); },
      (error) => { clearTimeout(timer); resolve({ ok: false, error }); },
    );
  });
}
export function never() { return () => new Promise(() => {}); }
export function deferred() {
  let resolve;
  const promise = new Promise((r) => { resolve = r; });
  return { promise, resolve };
}
export function ignoringSignal(gate, log) {
  // Work that ignores its AbortSignal: it ends only when `gate` resolves.
  return () => { log.running += 1; log.peak = Math.max(log.peak, log.running);
    return gate.promise.finally(() => { log.running -= 1; }); };
}
export function counter() { return { running: 0, peak: 0 }; }
export function withSignal(signal) { return { signal }; }
export function withDeadline(ms) { return { deadlineMs: ms }; }
export function abortController() { return new AbortController(); }
export function nested(inner) { return () => inner.run(() => "inner"); }
export function now() { return Date.now(); }
"#)]
extern "C" {
    fn options(json: &str) -> JsValue;
    #[wasm_bindgen(js_name = settleWithin)]
    fn settle_within(promise: &Promise, ms: f64) -> Promise;
    fn never() -> JsValue;
    fn deferred() -> JsValue;
    #[wasm_bindgen(js_name = ignoringSignal)]
    fn ignoring_signal(gate: &JsValue, log: &JsValue) -> JsValue;
    fn counter() -> JsValue;
    #[wasm_bindgen(js_name = withSignal)]
    fn with_signal(signal: &web_sys::AbortSignal) -> JsValue;
    #[wasm_bindgen(js_name = withDeadline)]
    fn with_deadline(ms: f64) -> JsValue;
    #[wasm_bindgen(js_name = abortController)]
    fn abort_controller() -> web_sys::AbortController;
    fn nested(inner: &JsValue) -> JsValue;
    fn now() -> f64;
}

fn get(object: &JsValue, key: &str) -> JsValue {
    Reflect::get(object, &key.into()).unwrap()
}

fn stat(limiter: &Limiter, key: &str) -> f64 {
    get(&limiter.stats(), key).as_f64().unwrap()
}

fn limiter(json: &str) -> Limiter {
    Limiter::new(options(json)).unwrap()
}

/// The call's outcome within `ms`: `Some(Ok | Err)`, or `None` if pending.
async fn within(promise: &Promise, ms: f64) -> Option<Result<JsValue, JsValue>> {
    let settled = JsFuture::from(settle_within(promise, ms)).await.unwrap();
    if get(&settled, "pending").is_truthy() {
        return None;
    }
    Some(if get(&settled, "ok").is_truthy() {
        Ok(get(&settled, "value"))
    } else {
        Err(get(&settled, "error"))
    })
}

fn name(error: &JsValue) -> String {
    get(error, "name").as_string().unwrap_or_default()
}

/// A limiter exported to JavaScript, so that a JS `fn` can call its `run`.
fn exported(limiter: Limiter) -> JsValue {
    JsValue::from(limiter)
}

fn js_stat(limiter: &JsValue, key: &str) -> f64 {
    let stats: Function = get(limiter, "stats").dyn_into().unwrap();
    get(&stats.call0(limiter).unwrap(), key).as_f64().unwrap()
}

fn js_run(limiter: &JsValue, task: &JsValue) -> Promise {
    let run: Function = get(limiter, "run").dyn_into().unwrap();
    run.call1(limiter, task).unwrap().dyn_into().unwrap()
}

/// The issue's reproduction: `outer` runs in limiter A (with a signal or a
/// deadline, so it has a task of its own); inside it, a call to the full
/// limiter B must time out after B's 50 ms queue timeout, not A's.
async fn nested_call_keeps_its_queue_timeout(outer_options: impl Fn() -> JsValue) {
    let a = limiter(r#"{"maxInFlight": 1, "maxQueue": 1, "queueTimeoutMs": 10000}"#);
    let b = exported(limiter(
        r#"{"maxInFlight": 1, "maxQueue": 1, "queueTimeoutMs": 50}"#,
    ));
    let _holder = js_run(&b, &never()); // B is full
    let started = now();
    let outer = a.run(nested(&b), outer_options());
    let outer = Rc::new(outer);
    let outcome = within(&outer, 2000.0).await;
    let elapsed = now() - started;
    let error = match outcome {
        Some(Err(error)) => error,
        other => panic!("the nested call should be rejected, got {other:?} after {elapsed} ms"),
    };
    assert_eq!(
        name(&error),
        "OverloadedError",
        "B's queue timeout: {error:?}"
    );
    assert!(
        elapsed < 1000.0,
        "rejected after {elapsed} ms, not at B's 50 ms"
    );
    assert_eq!(js_stat(&b, "queueTimeouts"), 1.0);
    assert_eq!(js_stat(&b, "queued"), 0.0);
}

#[wasm_bindgen_test]
async fn a_nested_call_keeps_its_queue_timeout_under_an_outer_signal() {
    nested_call_keeps_its_queue_timeout(|| with_signal(&abort_controller().signal())).await;
}

#[wasm_bindgen_test]
async fn a_nested_call_keeps_its_queue_timeout_under_an_outer_deadline() {
    nested_call_keeps_its_queue_timeout(|| with_deadline(1000.0)).await;
}

/// A `fn` that ignores its signal: its caller is rejected at once, but the
/// slot stays taken until the work settles, and no second call runs meanwhile.
async fn slot_is_held_until_abandoned_work_settles(
    give_up: impl FnOnce(&Limiter, &JsValue, &JsValue) -> (Promise, Option<web_sys::AbortController>),
    expect: &str,
) {
    let limiter = limiter(r#"{"maxInFlight": 1, "maxQueue": 1, "queueTimeoutMs": 60000}"#);
    let gate = deferred();
    let log = counter();
    let (abandoned, controller) = give_up(&limiter, &gate, &log);
    if let Some(controller) = controller {
        controller.abort_with_reason(&JsValue::from_str("AbortReason"));
    }
    let error = within(&abandoned, 2000.0).await.unwrap().unwrap_err();
    let described = if error.is_string() {
        error.as_string().unwrap()
    } else {
        name(&error)
    };
    assert_eq!(described, expect, "the caller is rejected at once");
    assert_eq!(stat(&limiter, "inFlight"), 1.0, "the work still runs");
    assert_eq!(stat(&limiter, "abandoned"), 1.0);
    // A second call waits: the origin never sees two calls at once.
    let second = limiter.run(ignoring_signal(&gate, &log), JsValue::UNDEFINED);
    assert_eq!(stat(&limiter, "queued"), 1.0);
    assert!(within(&second, 30.0).await.is_none(), "no slot for it yet");
    let resolve: Function = get(&gate, "resolve").dyn_into().unwrap();
    resolve.call1(&JsValue::UNDEFINED, &"done".into()).unwrap();
    assert_eq!(within(&second, 2000.0).await.unwrap().unwrap(), "done");
    assert_eq!(get(&log, "peak").as_f64(), Some(1.0), "never two at once");
    assert_eq!(stat(&limiter, "inFlight"), 0.0);
}

#[wasm_bindgen_test]
async fn a_deadline_rejects_at_once_but_the_slot_is_held_until_fn_settles() {
    slot_is_held_until_abandoned_work_settles(
        |limiter, gate, log| {
            (
                limiter.run(ignoring_signal(gate, log), with_deadline(20.0)),
                None,
            )
        },
        "DeadlineError",
    )
    .await;
}

#[wasm_bindgen_test]
async fn an_abort_rejects_at_once_but_the_slot_is_held_until_fn_settles() {
    slot_is_held_until_abandoned_work_settles(
        |limiter, gate, log| {
            let controller = abort_controller();
            let call = limiter.run(
                ignoring_signal(gate, log),
                with_signal(&controller.signal()),
            );
            (call, Some(controller))
        },
        "AbortReason",
    )
    .await;
}
