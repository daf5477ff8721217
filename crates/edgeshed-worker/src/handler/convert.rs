//! Reading the `EDGESHED` binding (object or JSON string) into a
//! [`Config`], through serde-wasm-bindgen.
//!
//! serde-wasm-bindgen reads objects with imports that do not catch
//! (`Object.entries`, indexing), so the binding is first copied into plain
//! data by `plainCopy` (glue.js), which catches: a binding that throws (a
//! getter, a proxy) is a configuration error naming the key, never an
//! exception unwinding through Rust. The copy only copies; every type and
//! range is judged by the one deserializer, [`Config::from_deserializer`].

use crate::config::{Config, ConfigError};
use crate::handler::host::plain_copy;
use wasm_bindgen::prelude::*;

/// The configuration in `env.EDGESHED`, an object or a JSON string. A
/// missing or unreadable binding is an error: the gateway fails closed.
pub(crate) fn read_config(env: &JsValue) -> Result<Config, ConfigError> {
    if !env.is_object() {
        return Err(ConfigError::missing_binding("the worker got no env object"));
    }
    let binding = js_sys::Reflect::get(env, &"EDGESHED".into()).map_err(|error| {
        ConfigError::missing_binding(&format!(
            "reading env.EDGESHED threw ({})",
            message_of(&error)
        ))
    })?;
    if binding.is_undefined() || binding.is_null() {
        return Err(ConfigError::missing_binding("env has no EDGESHED"));
    }
    let source = match binding.as_string() {
        Some(text) => parse_json(&text)?,
        None => binding,
    };
    let plain = plain_copy(&source).map_err(|error| match message_of(&error) {
        message if message.is_empty() => ConfigError::new("EDGESHED could not be read"),
        message => ConfigError::new(message),
    })?;
    Config::from_deserializer(serde_wasm_bindgen::Deserializer::from(plain))
}

fn parse_json(text: &str) -> Result<JsValue, ConfigError> {
    js_sys::JSON::parse(text).map_err(|error| {
        ConfigError::new(format!(
            "EDGESHED is not valid JSON: {}",
            message_of(&error)
        ))
    })
}

/// The `message` of a thrown value (or the value itself if it is a string).
fn message_of(error: &JsValue) -> String {
    error
        .as_string()
        .or_else(|| {
            js_sys::Reflect::get(error, &"message".into())
                .ok()?
                .as_string()
        })
        .unwrap_or_default()
}
