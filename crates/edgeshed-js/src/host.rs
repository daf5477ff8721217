//! Every JavaScript binding of the npm package's Rust side (`glue.js`,
//! `options.js`, `call-options.js`, `options-schema.js`), in one place: the rest of the crate calls these
//! functions and never declares an import of its own. None of them throws
//! into Rust unless it returns a `Result` (an import marked `catch`).

use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

#[wasm_bindgen(module = "/src/glue.js")]
extern "C" {
    // --- src/bodies.rs ---
    /// `(idleMs) => DeadlineError`: the reason a body idle for
    /// `bodyTimeoutMs` is cut with (a later read rejects with it).
    #[wasm_bindgen(thread_local_v2, js_name = bodyIdleError)]
    pub(crate) static BODY_IDLE_ERROR: JsValue;
    // --- src/call/run.rs ---
    /// `Promise.resolve(value)`, calling `release(id, rejected, reason)`
    /// when it settles; `release` runs at once and the promise rejects if
    /// `Promise.resolve` throws.
    #[wasm_bindgen(js_name = releaseWhenSettled)]
    pub(crate) fn release_when_settled(
        value: &JsValue,
        id: f64,
        release: &JsValue,
    ) -> js_sys::Promise;
    /// Once `value` settles: `release(id, rejected, reason)` as above, then `resolve`
    /// or `reject` with its outcome (at once, rejecting, if `Promise.resolve` throws).
    #[wasm_bindgen(js_name = settleHolding)]
    pub(crate) fn settle_holding(
        value: &JsValue,
        id: f64,
        release: &JsValue,
        resolve: &js_sys::Function,
        reject: &js_sys::Function,
    );
    // --- src/errors.rs ---
    /// An `Error` with the given `name`, `message` and HTTP-like `status`,
    /// made in JavaScript (one boundary crossing instead of four).
    #[wasm_bindgen(js_name = errorWithStatus)]
    pub(crate) fn error_with_status(name: &str, message: &str, status: u16) -> JsValue;
    /// A promise rejected with an `OverloadedError` whose stack starts at
    /// the caller of `run` (or `fetch`): the shed path's one crossing.
    /// `ceiling` is what the call's criticality (`rank`, its index) may hold.
    #[wasm_bindgen(js_name = shedRejection)]
    pub(crate) fn shed_rejection(
        limit: u32,
        max_queue: u32,
        ceiling: u32,
        rank: u32,
    ) -> js_sys::Promise;
    /// A promise rejected with a `RateLimitedError` (stack as for a shed):
    /// `retry_after_ms` < 0 for the fair share, else the rate limit's.
    #[wasm_bindgen(js_name = rateLimitedRejection)]
    pub(crate) fn rate_limited_rejection(limit: u32, retry_after_ms: f64) -> js_sys::Promise;
    /// A promise rejected with an `OverloadedError` of `reason` `"closed"`
    /// (stack as for a shed): a call made after `limiter.close()`.
    #[wasm_bindgen(js_name = closedRejection)]
    pub(crate) fn closed_rejection() -> js_sys::Promise;
    // --- src/lifecycle.rs ---
    /// A promise resolved now if `idle`, else one whose resolve function is
    /// pushed onto `resolves`.
    #[wasm_bindgen(js_name = idlePromise)]
    pub(crate) fn idle_promise(resolves: &js_sys::Array, idle: bool) -> js_sys::Promise;
    /// Empties `resolves`, calling each.
    #[wasm_bindgen(js_name = resolveAll)]
    pub(crate) fn resolve_all(resolves: &js_sys::Array);
    /// A `RateLimitedError` with the stack of `site`.
    #[wasm_bindgen(js_name = rateLimitedErrorAt)]
    pub(crate) fn rate_limited_error_at(site: &JsValue, limit: u32, retry_after_ms: f64)
        -> JsValue;
    /// Where a call was made: an object that gets the caller's stack once
    /// the call returns, for an error raised later ([`Caller::error`],
    /// [`Caller::expired`]).
    #[wasm_bindgen(js_name = callSite)]
    pub(crate) fn call_site() -> JsValue;
    /// An `OverloadedError` with the stack of `site`; `cause` is
    /// [`cause_index`]'s.
    #[wasm_bindgen(js_name = overloadedErrorAt)]
    pub(crate) fn overloaded_error_at(
        site: &JsValue,
        cause: u32,
        limit: u32,
        max_queue: u32,
        timeout_ms: u32,
    ) -> JsValue;
    /// A `DeadlineError` with the stack of `site` (or none: `undefined`).
    #[wasm_bindgen(js_name = deadlineErrorAt)]
    pub(crate) fn deadline_error_at(site: &JsValue, deadline_ms: u32, running: bool) -> JsValue;
    // --- src/stats.rs ---
    /// The stats layout's paths (`stats.rs`), parsed for [`stats_object`].
    #[wasm_bindgen(js_name = statsLayout)]
    pub(crate) fn stats_layout(paths: &str) -> JsValue;
    /// The `stats()` object: `values` placed by `layout` ([`stats_layout`]'s),
    /// `keys` the shown keys (or `null`) of its list of refused keys.
    #[wasm_bindgen(js_name = statsObject)]
    pub(crate) fn stats_object(layout: &JsValue, values: &[f64], keys: &js_sys::Array) -> JsValue;
    // --- src/sampling.rs ---
    /// What a rejection reason (or a `Response`) says: -1 for a
    /// `DeadlineError` (by name), its `status` if that is a number, else NaN. Never throws (a
    /// throwing getter counts as saying nothing).
    #[wasm_bindgen(js_name = endingCode)]
    pub(crate) fn ending_code(reason: &JsValue) -> f64;
}

// --- src/options.rs ---
#[wasm_bindgen(module = "/src/options.js")]
extern "C" {
    /// `[maxInFlight, algorithm, initialLimit, minLimit, maxLimit, maxQueue,
    /// queueTimeoutMs, bodyTimeoutMs, reserve.critical, reserve.default,
    /// codelTargetMs, rate count, rate period (s), burst, maxKeys,
    /// maxQueueWait (1: auto)]`,
    /// validated (see options.js); the algorithm is an index into
    /// [`AnyLimit::NAMES`](edgeshed::limit::adaptive::AnyLimit::NAMES), -1 for a fixed limit; codelTargetMs 0 for fifo,
    /// rate count 0 for no rate limit.
    #[wasm_bindgen(js_name = limiterOptions, catch)]
    pub(crate) fn limiter_options_js(options: &JsValue) -> Result<Vec<f64>, JsValue>;
}

#[wasm_bindgen(module = "/src/call-options.js")]
extern "C" {
    /// The validated edgeshed keys of call options, in one number (see
    /// call-options.js): `(((deadlineMs + 1) * 2 + hasKey) * 2 + hasSignal) * 4 +
    /// criticality index` (3 when not given); -1 when they are invalid
    /// ([`call_error`] has the error).
    #[wasm_bindgen(js_name = callFacts)]
    pub(crate) fn call_facts(object: &JsValue, strict: bool) -> f64;

    /// The `TypeError`/`RangeError` of the last [`call_facts`] that returned -1.
    #[wasm_bindgen(js_name = callError)]
    pub(crate) fn call_error() -> JsValue;

    /// The `signal` read by the last [`call_facts`] (called when it has one).
    #[wasm_bindgen(js_name = callSignal)]
    pub(crate) fn call_signal() -> AbortSignal;

    /// The `key` read by the last [`call_facts`] (called when it has one).
    #[wasm_bindgen(js_name = callKey)]
    pub(crate) fn call_key() -> String;

    /// `setLimit`'s argument, validated: an integer in the range of
    /// [`SET_LIMIT`](edgeshed::options_schema::SET_LIMIT).
    #[wasm_bindgen(js_name = checkedLimit, catch)]
    pub(crate) fn checked_limit(limit: &JsValue) -> Result<f64, JsValue>;
}

// `options.js` imports the option data rendered from the core's table
// (src/options_schema.rs) from `options-schema.js`: wasm-bindgen copies a
// snippet file only when an extern block names it. This import is never
// called, so the wasm does not import it (no size cost).
#[wasm_bindgen(module = "/src/options-schema.js")]
extern "C" {
    /// The `new Limiter(options)` keys (never called: see above).
    #[wasm_bindgen(thread_local_v2, js_name = LIMITER)]
    #[allow(dead_code)]
    static LIMITER_SCHEMA: JsValue;
}
