//! `checkConfig`: the worker's own validator, exported for the offline
//! checker (`scripts/check-config.mjs`, `edgeshed check`), which loads this
//! very wasm in Node. It reads the binding exactly as a request does
//! ([`read_config`]), without `env`'s other bindings: what those must be
//! is in the report's `bindings`, for the checker to find in wrangler.toml.

use super::convert::read_config;
use crate::check::Checked;
use wasm_bindgen::prelude::*;

/// Checks `binding` (what `env.EDGESHED` would be: an object or a JSON
/// string) and returns the report as JSON ([`Checked::to_json`]).
#[wasm_bindgen(js_name = checkConfig)]
pub fn check_config(binding: JsValue) -> String {
    let env = js_sys::Object::new();
    // Setting a property of a fresh plain object cannot throw; had it
    // failed, the report would say the binding is missing.
    let _ = js_sys::Reflect::set(&env, &"EDGESHED".into(), &binding);
    Checked::of(&read_config(&env)).to_json()
}
