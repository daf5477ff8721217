//! Every JavaScript binding of the handler (`glue.js`, `budget_glue.js`),
//! in one place: the rest of the handler calls these functions and never
//! declares an import of its own. None of them throws into Rust unless it
//! returns a `Result` (an import marked `catch`).

use wasm_bindgen::prelude::*;
use web_sys::AbortController;

#[wasm_bindgen(module = "/src/handler/budget_glue.js")]
extern "C" {
    // --- src/handler/admin/budget.rs ---
    /// Resolves (never rejects) to `{ origins: { <name>: view } }`.
    #[wasm_bindgen(js_name = fleetViews)]
    pub(crate) fn fleet_views(entries: &js_sys::Array, timeout_ms: f64) -> js_sys::Promise;
    // --- src/handler/budget/build.rs ---
    /// `env[name]` if it is a Durable Object namespace, else `undefined`.
    #[wasm_bindgen(js_name = namespaceOf)]
    pub(crate) fn namespace_of(env: &JsValue, name: &str) -> JsValue;
    /// `console.warn(message)`; never throws.
    #[wasm_bindgen(js_name = logWarning)]
    pub(crate) fn log_warning(message: &str);
    /// This Worker's deploy version (`{ timestamp, id }` from
    /// `env.CF_VERSION_METADATA`), or `undefined`; never throws.
    #[wasm_bindgen(js_name = versionOf)]
    pub(crate) fn version_of(env: &JsValue) -> JsValue;
    // --- src/handler/budget/calls.rs ---
    /// A fresh random holder id.
    #[wasm_bindgen(js_name = newHolderId)]
    pub(crate) fn new_holder_id() -> String;
    /// One lease call; `done(ok, [permits, ttlMs, renewMs, epoch],
    /// learning, contended, overloaded)` is called once, later. `numbers`:
    /// `[limit, ttlMs, held, inUse, wanted, waitMs, timeoutMs, epoch]`, then
    /// the report (see `budget_glue.js`); `stated`: `{ adaptive, version }`
    /// (the budget's `adaptive` section and this Worker's version).
    #[wasm_bindgen(js_name = callLease)]
    pub(crate) fn call_lease(
        namespace: &JsValue,
        name: &str,
        holder: &str,
        numbers: &[f64],
        stated: &JsValue,
        done: JsValue,
        ctx: &JsValue,
    );
    /// One watch; `done(ok, contended, overloaded)` is called once, later.
    /// `numbers`: `[limit, ttlMs, waitMs, timeoutMs]`; `stated` as for
    /// `callLease`.
    #[wasm_bindgen(js_name = callWatch)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn call_watch(
        namespace: &JsValue,
        name: &str,
        holder: &str,
        contended: bool,
        numbers: &[f64],
        stated: &JsValue,
        done: JsValue,
        ctx: &JsValue,
    );
    /// `callback()` after `ms`, under `ctx.waitUntil`.
    pub(crate) fn later(ctx: &JsValue, ms: f64, callback: JsValue);
}

#[wasm_bindgen(module = "/src/handler/glue.js")]
extern "C" {
    // --- src/handler/proxy/held.rs ---
    /// `() => Error("origin body stalled")`: what a body whose origin sat
    /// silent for the origin's timeout is cut with.
    #[wasm_bindgen(thread_local_v2, js_name = originStalled)]
    pub(crate) static ORIGIN_STALLED: JsValue;
    // --- src/handler/convert.rs ---
    /// A plain copy of the binding (objects, arrays, scalars; at most 32
    /// levels deep); throws the message of a configuration error.
    #[wasm_bindgen(catch, js_name = plainCopy)]
    pub(crate) fn plain_copy(value: &JsValue) -> Result<JsValue, JsValue>;
    // --- src/handler/fanout/call.rs ---
    /// The body as text, or `null` once it exceeds `max` bytes (reading stops there).
    #[wasm_bindgen(js_name = readTextLimited)]
    pub(crate) fn read_text_limited(response: &web_sys::Response, max: f64) -> js_sys::Promise;
    /// Cancels the body of `response`, if any, ignoring errors (also for
    /// a prefix route's unrelayable status, `proxy`).
    #[wasm_bindgen(js_name = cancelBody)]
    pub(crate) fn cancel_body(response: &web_sys::Response);
    /// Whether `readTextLimited` gave up on this response for its size.
    #[wasm_bindgen(js_name = tooLarge)]
    pub(crate) fn too_large(response: &web_sys::Response) -> bool;
    // --- src/handler/gateway.rs ---
    /// `console.error(message)`; never throws.
    #[wasm_bindgen(js_name = logError)]
    pub(crate) fn log_error(message: &str);
    // --- src/handler/mod.rs ---
    /// `ctx.waitUntil(promise)` (settled either way), if `ctx` has it.
    #[wasm_bindgen(js_name = waitUntilSettled)]
    pub(crate) fn wait_until(ctx: &JsValue, promise: &js_sys::Promise);
    /// `console.error(context, error)` (the error's message and stack);
    /// never throws.
    #[wasm_bindgen(js_name = logException)]
    pub(crate) fn log_exception(context: &str, error: &JsValue);
    // --- src/handler/origin/limit.rs ---
    /// `controller.abort()`, ignoring a throw.
    #[wasm_bindgen(js_name = tryAbort)]
    pub(crate) fn try_abort(controller: &AbortController);
    // --- src/handler/respond.rs ---
    /// `new Response(body, { status, headers })` from the headers' lines
    /// (name, value, name, value...); throws (`Err`) as the constructor does.
    #[wasm_bindgen(js_name = makeResponse, catch)]
    pub(crate) fn make_response(
        status: u16,
        body: &JsValue,
        lines: &str,
    ) -> Result<web_sys::Response, JsValue>;
    /// `stream.cancel()`, ignoring a throw or a rejection.
    #[wasm_bindgen(js_name = cancelStream)]
    pub(crate) fn cancel_stream(stream: &web_sys::ReadableStream);
    // --- src/handler/route.rs ---
    /// `env[name]` if it has a `limit` method (a Rate Limiting binding), else `undefined`.
    #[wasm_bindgen(js_name = rateLimiterOf)]
    pub(crate) fn rate_limiter_of(env: &JsValue, name: &str) -> JsValue;
    /// `binding.limit({ key })` as a promise of `true` (allowed) or `false`;
    /// never throws or rejects (a failing binding allows: it is not a limit
    /// of the gateway's own).
    #[wasm_bindgen(js_name = rateLimitAllows)]
    pub(crate) fn rate_limit_allows(binding: &JsValue, key: &str) -> js_sys::Promise;
}
