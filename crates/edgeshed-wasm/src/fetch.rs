//! The host's `fetch`, called so that nothing can throw through a poll.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/glue.js")]
extern "C" {
    /// The host's `fetch(input, init)`; a synchronous throw becomes `Err`.
    #[wasm_bindgen(js_name = globalFetch, catch)]
    pub fn global_fetch(input: &JsValue, init: &JsValue) -> Result<js_sys::Promise, JsValue>;
}
