//! Every JavaScript binding of this crate, in one place: the helpers of
//! `glue.js` (none of which throws unless its import says `catch`) and the
//! host's globals. The rest of the crate calls JavaScript only through here.

use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

#[wasm_bindgen(module = "/src/glue.js")]
extern "C" {
    /// `performance.now()`, or `Date.now()` where the host has no
    /// `performance` (chosen once, when the module loads).
    #[wasm_bindgen(js_name = monotonicNow)]
    pub(crate) fn now_millis() -> f64;
    /// The wall clock in ms since the Unix epoch (NaN if unreadable).
    #[wasm_bindgen(js_name = wallNow)]
    pub(crate) fn wall_millis() -> f64;

    /// 16 random bytes (WebCrypto; never throws).
    #[wasm_bindgen(js_name = randomSecret)]
    pub(crate) fn random_secret() -> js_sys::Uint8Array;

    /// Whether this is workerd (Cloudflare Workers).
    #[wasm_bindgen(js_name = inWorkerd)]
    pub(crate) fn in_workerd() -> bool;
    /// Wraps a callback into wasm: an exception thrown through it is logged
    /// and `recover` runs, instead of an unhandled rejection.
    pub(crate) fn guarded(callback: &JsValue, label: &str, recover: &JsValue) -> js_sys::Function;
    /// `promise.then(callback)`.
    #[wasm_bindgen(js_name = thenCall)]
    pub(crate) fn then_call(promise: &js_sys::Promise, callback: &js_sys::Function);
    /// Whether `signal` (a request's) can be read here, i.e. this turn
    /// belongs to its request.
    #[wasm_bindgen(js_name = inOwnContext)]
    pub(crate) fn in_own_context(signal: &JsValue) -> bool;

    /// `Promise.resolve(value).then(ok, err)` reporting to `on_settled(id,
    /// fulfilled, value)`; a synchronous throw is reported as a rejection.
    #[wasm_bindgen(js_name = watchSettled)]
    pub(crate) fn watch_settled(value: &JsValue, id: f64, on_settled: &JsValue);

    /// `{ reason }` if `signal` has aborted, else `undefined` (also when the
    /// host refuses to read it).
    #[wasm_bindgen(js_name = abortReason)]
    pub fn abort_reason(signal: &AbortSignal) -> JsValue;
    /// Calls `callback({ reason })` when `signal` aborts; returns the listener.
    #[wasm_bindgen(js_name = onAbort)]
    pub(crate) fn on_abort(signal: &AbortSignal, callback: &JsValue) -> JsValue;
    /// Removes a listener added by `onAbort`.
    #[wasm_bindgen(js_name = offAbort)]
    pub(crate) fn off_abort(signal: &AbortSignal, listener: &JsValue);

    /// The response bodies one holder holds (`glue.js`): their counts, and
    /// each one's expiry check for the sweep.
    #[derive(Debug)]
    pub(crate) type BodyHolder;
    /// `{ heldBodies: 0, bodyTimeouts: 0, ... }`.
    #[wasm_bindgen(js_name = bodyHolder)]
    pub(crate) fn body_holder() -> BodyHolder;
    /// Bodies held now.
    #[wasm_bindgen(method, getter, js_name = heldBodies)]
    pub(crate) fn held_bodies(this: &BodyHolder) -> f64;
    /// Bodies cut because no chunk moved through them for their timeout.
    #[wasm_bindgen(method, getter, js_name = bodyTimeouts)]
    pub(crate) fn body_timeouts(this: &BodyHolder) -> f64;
    /// Expires the holder's bodies idle for their timeout; returns how many
    /// are still held.
    #[wasm_bindgen(js_name = sweepBodies)]
    pub(crate) fn sweep_bodies(holder: &BodyHolder) -> f64;
    /// Pipes `response`'s body so that `release(id)` runs once, when it is
    /// done (see `body.rs`); returns the new body (`wrap`: in a copy of the
    /// response), or null for none. A synchronous throw (after
    /// `release(id)` ran) becomes `Err`.
    #[wasm_bindgen(js_name = holdBody, catch)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn hold_body(
        holder: &BodyHolder,
        response: &JsValue,
        idle_ms: f64,
        host: &JsValue,
        idle_reason: &JsValue,
        release: &JsValue,
        id: f64,
        wrap: bool,
    ) -> Result<JsValue, JsValue>;

    /// The host's `fetch(input, init)`; a synchronous throw becomes `Err`.
    #[wasm_bindgen(js_name = globalFetch, catch)]
    pub fn global_fetch(input: &JsValue, init: &JsValue) -> Result<js_sys::Promise, JsValue>;
    /// A copy of `init` whose `signal` also aborts when `signal` does (with
    /// `AbortSignal.any` if `init` has a signal); a throw becomes `Err`.
    #[wasm_bindgen(js_name = withSignal, catch)]
    pub fn with_signal(init: &JsValue, signal: &AbortSignal) -> Result<JsValue, JsValue>;
}

#[wasm_bindgen]
extern "C" {
    /// `setTimeout(callback, ms, id)`: the callback receives the id (the
    /// one binding of `setTimeout`, for sleeps and the executor alike).
    #[wasm_bindgen(js_name = setTimeout, catch)]
    pub(crate) fn set_timeout(
        callback: &js_sys::Function,
        milliseconds: f64,
        id: &JsValue,
    ) -> Result<JsValue, JsValue>;
    /// `clearTimeout(handle)`.
    #[wasm_bindgen(js_name = clearTimeout, catch)]
    pub(crate) fn clear_timeout(handle: &JsValue) -> Result<(), JsValue>;
    /// `queueMicrotask(callback)`.
    #[wasm_bindgen(js_name = queueMicrotask)]
    pub(crate) fn queue_microtask(callback: &js_sys::Function);
}
