//! A proxied body that holds the request's permits until it has streamed
//! (or the client went away): piped in JavaScript under `ctx.waitUntil`
//! (`pipeHeld`, glue.js), which calls `release` once, when it settles.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/handler/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = pipeHeld, catch)]
    fn pipe_held(
        body: &web_sys::ReadableStream,
        release: JsValue,
        ctx: &JsValue,
        length: f64,
        idle_ms: f64,
    ) -> Result<web_sys::ReadableStream, JsValue>;
}

thread_local! {
    static HELD_BODIES: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
}

/// Proxied bodies still holding their permits (diagnostics).
pub(crate) fn held_bodies() -> usize {
    HELD_BODIES.with(core::cell::Cell::get)
}

/// The body of `response` (if any) as a stream that keeps `permits` until
/// it ends, is cancelled or stays idle for `idle`; the response's declared
/// length is kept unless the body was decoded on the way.
pub(super) fn hold<P: 'static>(
    response: &web_sys::Response,
    permits: P,
    ctx: &JsValue,
    idle: core::time::Duration,
) -> Result<Option<web_sys::ReadableStream>, JsValue> {
    let Some(body) = response.body() else {
        return Ok(None);
    };
    HELD_BODIES.with(|held| held.set(held.get() + 1));
    let release = Closure::once_into_js(move || {
        HELD_BODIES.with(|held| held.set(held.get().saturating_sub(1)));
        drop(permits);
    });
    let declared = response.headers();
    let length = match declared.get("content-encoding").ok().flatten() {
        Some(_) => None,
        None => declared
            .get("content-length")
            .ok()
            .flatten()
            .and_then(|value| value.trim().parse::<u64>().ok()),
    };
    pipe_held(
        &body,
        release,
        ctx,
        length.map_or(-1.0, |n| n as f64),
        idle.as_millis() as f64,
    )
    .map(Some)
}
