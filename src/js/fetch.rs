//! `Limiter.fetch`: the permit is held until the response body is done.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/js/glue.js")]
extern "C" {
    /// Wraps `response` so that `release(id)` runs once its body has been
    /// read to the end, errored or been cancelled (at once if it has no
    /// body); a synchronous throw (after `release(id)` ran) becomes `Err`.
    #[cfg(feature = "js")]
    #[wasm_bindgen(js_name = holdUntilBodyDone, catch)]
    pub(crate) fn hold_until_body_done(
        response: &JsValue,
        id: f64,
        release: &JsValue,
    ) -> Result<JsValue, JsValue>;

    /// The host's `fetch`; a synchronous throw becomes `Err`.
    #[wasm_bindgen(js_name = globalFetch, catch)]
    pub(crate) fn global_fetch(input: &JsValue, init: &JsValue)
        -> Result<js_sys::Promise, JsValue>;

    /// A copy of `init` whose `signal` also aborts when `signal` does.
    #[cfg(feature = "js")]
    #[wasm_bindgen(js_name = withSignal, catch)]
    pub(crate) fn with_signal(
        init: &JsValue,
        signal: &web_sys::AbortSignal,
    ) -> Result<JsValue, JsValue>;
}
