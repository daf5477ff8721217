//! Helpers shared by the wasm tests of the JS `Limiter`: JavaScript
//! fixtures (gates, tasks, fetch stubs) and ways to observe a call.
#![allow(dead_code, clippy::unwrap_used)] // each test file uses some of them

use edgeshed_js::Limiter;
use js_sys::{Array, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

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
    pub fn options(json: &str) -> JsValue;
    pub fn deferred() -> JsValue;
    pub fn gated(gate: &JsValue, log: &Array, name: &str) -> JsValue;
    pub fn returning(value: &JsValue) -> JsValue;
    pub fn throwing(message: &str) -> JsValue;
    pub fn rejecting(message: &str) -> JsValue;
    pub fn settle(promise: &Promise) -> Promise;
    #[wasm_bindgen(js_name = withSignal)]
    pub fn with_signal(signal: &web_sys::AbortSignal) -> JsValue;
    #[wasm_bindgen(js_name = withDeadline)]
    pub fn with_deadline(ms: f64) -> JsValue;
    #[wasm_bindgen(js_name = flushMicrotasks)]
    pub fn flush_microtasks() -> Promise;
    #[wasm_bindgen(js_name = installFetchStub)]
    pub fn install_fetch_stub() -> Array;
    #[wasm_bindgen(js_name = installEmptyFetchStub)]
    pub fn install_empty_fetch_stub();
    pub fn chunk(text: &str) -> JsValue;
    #[wasm_bindgen(js_name = readAll)]
    pub fn read_all(response: &JsValue) -> Promise;
    #[wasm_bindgen(js_name = abortController)]
    pub fn abort_controller() -> web_sys::AbortController;
    #[wasm_bindgen(js_name = hostilePromise)]
    pub fn hostile_promise(message: &str) -> JsValue;
}

pub fn get(object: &JsValue, key: &str) -> JsValue {
    Reflect::get(object, &key.into()).unwrap()
}

pub fn call(object: &JsValue, method: &str, args: &[&JsValue]) -> JsValue {
    let function: js_sys::Function = get(object, method).dyn_into().unwrap();
    let args: Array = args.iter().copied().collect();
    function.apply(object, &args).unwrap()
}

pub fn stat(limiter: &Limiter, key: &str) -> f64 {
    get(&limiter.stats(), key).as_f64().unwrap()
}

pub fn limiter(json: &str) -> Limiter {
    Limiter::new(options(json)).unwrap()
}

/// `limiter.run(...)`, observed at once so that no rejection goes unhandled
/// (Node aborts the process on those).
pub fn run(limiter: &Limiter, task: JsValue, options: JsValue) -> Promise {
    settle(&limiter.run(task, options))
}

/// `limiter.fetch(...)`, observed at once like [`run`].
pub fn fetch(limiter: &Limiter, input: JsValue, init: JsValue) -> Promise {
    settle(&limiter.fetch(input, init))
}

/// Waits for a call made by [`run`]/[`fetch`]: `Ok(value)` or `Err(error)`.
pub async fn outcome(settled: Promise) -> Result<JsValue, JsValue> {
    let settled = JsFuture::from(settled).await.unwrap();
    if get(&settled, "ok").as_bool().unwrap() {
        Ok(get(&settled, "value"))
    } else {
        Err(get(&settled, "error"))
    }
}

pub fn error_name(error: &JsValue) -> String {
    get(error, "name").as_string().unwrap()
}

pub async fn flush() {
    JsFuture::from(flush_microtasks()).await.unwrap();
}
