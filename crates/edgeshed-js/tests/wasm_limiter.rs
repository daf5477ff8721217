//! The JS `Limiter` driven by real JavaScript promises and timers, in Node and
//! in headless Chromium (`wasm-pack test --node` / `--headless --chrome`).
#![cfg(target_arch = "wasm32")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use edgeshed_js::Limiter;
use js_sys::{Array, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

#[wasm_bindgen(inline_js = r#"
export function options(json) { return JSON.parse(json); }
export function deferred() {
  let resolve, reject;
  const promise = new Promise((a, b) => { resolve = a; reject = b; });
  // A gate whose task never ran (shed) has no listener: keep its rejection handled.
  promise.catch(() => {});
  return { promise, resolve, reject };
}
export function gated(gate, log, name) {
  return () => { log.push(name); return gate.promise; };
}
export function returning(value) { return () => value; }
export function throwing(message) { return () => { throw new Error(message); }; }
export function rejecting(message) { return () => Promise.reject(new Error(message)); }
export function settle(promise) {
  return promise.then((value) => ({ ok: true, value }), (error) => ({ ok: false, error }));
}
export function withSignal(signal) { return { signal }; }
export function withDeadline(ms) { return { deadlineMs: ms }; }
export function flushMicrotasks() {
  // One macrotask turn: every pending microtask (promise reactions) runs first.
  return new Promise((resolve) => setTimeout(resolve, 0));
}
export function installFetchStub() {
  const controllers = [];
  globalThis.__edgeshedRealFetch ??= globalThis.fetch;
  globalThis.fetch = async () => {
    let controller;
    const body = new ReadableStream({ start(c) { controller = c; } });
    controllers.push(controller);
    return new Response(body, { status: 200 });
  };
  return controllers;
}
export function installEmptyFetchStub() {
  globalThis.__edgeshedRealFetch ??= globalThis.fetch;
  globalThis.fetch = async () => new Response(null, { status: 204 });
}
export function chunk(text) { return new TextEncoder().encode(text); }
export async function readAll(response) { return await response.text(); }
export function abortController() { return new AbortController(); }
export function hostilePromise(message) {
  // A promise that Promise.resolve() cannot adopt: reading its constructor throws.
  return () => {
    const promise = Promise.resolve("never seen");
    Object.defineProperty(promise, "constructor", { get() { throw new Error(message); } });
    return promise;
  };
}
"#)]
extern "C" {
    fn options(json: &str) -> JsValue;
    fn deferred() -> JsValue;
    fn gated(gate: &JsValue, log: &Array, name: &str) -> JsValue;
    fn returning(value: &JsValue) -> JsValue;
    fn throwing(message: &str) -> JsValue;
    fn rejecting(message: &str) -> JsValue;
    fn settle(promise: &Promise) -> Promise;
    #[wasm_bindgen(js_name = withSignal)]
    fn with_signal(signal: &web_sys::AbortSignal) -> JsValue;
    #[wasm_bindgen(js_name = withDeadline)]
    fn with_deadline(ms: f64) -> JsValue;
    #[wasm_bindgen(js_name = flushMicrotasks)]
    fn flush_microtasks() -> Promise;
    #[wasm_bindgen(js_name = installFetchStub)]
    fn install_fetch_stub() -> Array;
    #[wasm_bindgen(js_name = installEmptyFetchStub)]
    fn install_empty_fetch_stub();
    fn chunk(text: &str) -> JsValue;
    #[wasm_bindgen(js_name = readAll)]
    fn read_all(response: &JsValue) -> Promise;
    #[wasm_bindgen(js_name = abortController)]
    fn abort_controller() -> web_sys::AbortController;
    #[wasm_bindgen(js_name = hostilePromise)]
    fn hostile_promise(message: &str) -> JsValue;
}

fn get(object: &JsValue, key: &str) -> JsValue {
    Reflect::get(object, &key.into()).unwrap()
}

fn call(object: &JsValue, method: &str, args: &[&JsValue]) -> JsValue {
    let function: js_sys::Function = get(object, method).dyn_into().unwrap();
    let args: Array = args.iter().copied().collect();
    function.apply(object, &args).unwrap()
}

fn stat(limiter: &Limiter, key: &str) -> f64 {
    get(&limiter.stats(), key).as_f64().unwrap()
}

fn limiter(json: &str) -> Limiter {
    Limiter::new(options(json)).unwrap()
}

/// `limiter.run(...)`, observed at once so that no rejection goes unhandled
/// (Node aborts the process on those).
fn run(limiter: &Limiter, task: JsValue, options: JsValue) -> Promise {
    settle(&limiter.run(task, options))
}

/// `limiter.fetch(...)`, observed at once like [`run`].
fn fetch(limiter: &Limiter, input: JsValue, init: JsValue) -> Promise {
    settle(&limiter.fetch(input, init))
}

/// Waits for a call made by [`run`]/[`fetch`]: `Ok(value)` or `Err(error)`.
async fn outcome(settled: Promise) -> Result<JsValue, JsValue> {
    let settled = JsFuture::from(settled).await.unwrap();
    if get(&settled, "ok").as_bool().unwrap() {
        Ok(get(&settled, "value"))
    } else {
        Err(get(&settled, "error"))
    }
}

fn error_name(error: &JsValue) -> String {
    get(error, "name").as_string().unwrap()
}

async fn flush() {
    JsFuture::from(flush_microtasks()).await.unwrap();
}

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

/// A small deterministic PRNG (xorshift64*), so a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[wasm_bindgen_test]
async fn a_thousand_randomised_calls_leave_nothing_in_flight_or_queued() {
    let limiter = limiter(r#"{"maxInFlight": 4, "maxQueue": 8, "queueTimeoutMs": 3}"#);
    let mut rng = Rng(0x005e_ed0f_ed9e_5bed);
    let log = Array::new();
    let mut calls = Vec::new();
    let mut gates = Vec::new();
    let mut aborts = Vec::new();
    for i in 0..1000 {
        let promise = match rng.below(6) {
            0 => run(&limiter, returning(&JsValue::from(i)), JsValue::UNDEFINED),
            1 => run(&limiter, rejecting("boom"), JsValue::UNDEFINED),
            2 => run(&limiter, throwing("sync"), JsValue::UNDEFINED),
            3 => {
                let gate = deferred();
                let promise = run(&limiter, gated(&gate, &log, "gated"), JsValue::UNDEFINED);
                gates.push(gate);
                promise
            }
            4 => {
                let gate = deferred();
                let promise = run(
                    &limiter,
                    gated(&gate, &log, "deadline"),
                    with_deadline(rng.below(4) as f64),
                );
                gates.push(gate);
                promise
            }
            _ => {
                let controller = abort_controller();
                let gate = deferred();
                let promise = run(
                    &limiter,
                    gated(&gate, &log, "aborted"),
                    with_signal(&controller.signal()),
                );
                aborts.push(controller);
                gates.push(gate);
                promise
            }
        };
        assert!(stat(&limiter, "inFlight") <= 4.0);
        assert!(stat(&limiter, "queued") <= 8.0);
        calls.push(promise);
        // Now and then let time pass and settle some of the outstanding work.
        if rng.below(8) == 0 {
            flush().await;
            for gate in gates.drain(..) {
                if rng.below(2) == 0 {
                    call(&gate, "resolve", &[&JsValue::NULL]);
                } else {
                    call(&gate, "reject", &[&"rejected".into()]);
                }
            }
            for controller in aborts.drain(..) {
                controller.abort();
            }
        }
    }
    for gate in gates.drain(..) {
        call(&gate, "resolve", &[&JsValue::NULL]);
    }
    for controller in aborts.drain(..) {
        controller.abort();
    }
    let mut settled = 0;
    for promise in calls {
        let _ = outcome(promise).await;
        settled += 1;
    }
    assert_eq!(settled, 1000);
    assert_eq!(stat(&limiter, "inFlight"), 0.0);
    assert_eq!(stat(&limiter, "queued"), 0.0);
    let admitted = stat(&limiter, "admitted");
    let rejected = stat(&limiter, "shed") + stat(&limiter, "queueTimeouts");
    assert!(
        admitted > 0.0 && rejected > 0.0,
        "admitted {admitted}, rejected {rejected}"
    );
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
