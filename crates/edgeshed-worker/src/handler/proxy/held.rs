//! A proxied body that holds the request's permits until it has streamed
//! (or the client went away, or the origin went silent): edgeshed-wasm's
//! [`body`](edgeshed_wasm::body) primitive, its pipe under `ctx.waitUntil`.

use crate::handler::host::ORIGIN_STALLED;
use edgeshed_wasm::body::{Hold, Holder};
use wasm_bindgen::prelude::*;

thread_local! {
    /// Every proxied body of this isolate.
    static BODIES: Holder = Holder::new();
}

/// Proxied bodies still holding their permits (diagnostics).
pub(crate) fn held_bodies() -> usize {
    BODIES.with(|bodies| bodies.held_bodies() as usize)
}

/// The body of `response` (if any) as a stream that keeps `permits` until
/// it ends, is cancelled, its client goes away or no chunk moves through it
/// for `idle`; the response's declared length is kept unless the body was
/// decoded on the way.
pub(super) fn hold<P: 'static>(
    response: &web_sys::Response,
    permits: P,
    ctx: &JsValue,
    idle: core::time::Duration,
) -> Result<Option<web_sys::ReadableStream>, JsValue> {
    let idle_ms = u32::try_from(idle.as_millis()).unwrap_or(u32::MAX);
    ORIGIN_STALLED.with(|idle_reason| {
        let hold = Hold {
            idle_ms,
            host: ctx,
            idle_reason,
        };
        BODIES.with(|bodies| {
            bodies.sweep();
            bodies
                .hold_body(response, permits, &hold)
                .map(|body| body.map(JsCast::unchecked_into))
        })
    })
}
