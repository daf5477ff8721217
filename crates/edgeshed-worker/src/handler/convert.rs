//! Reading the `EDGESHED` binding (object or JSON string) into a [`Value`].
//!
//! Every read of a JavaScript value goes through an import that catches:
//! a binding that throws (a getter, a proxy) is a configuration error, never
//! an exception unwinding through Rust.

use crate::config::ConfigError;
use crate::value::Value;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// `Object.entries(value)`, catching what it throws.
    #[wasm_bindgen(catch, js_namespace = Object, js_name = entries)]
    fn entries_of(value: &JsValue) -> Result<js_sys::Array, JsValue>;
    /// `Array.isArray(value)`, catching what it throws (a revoked proxy).
    #[wasm_bindgen(catch, js_namespace = Array, js_name = isArray)]
    fn is_array(value: &JsValue) -> Result<bool, JsValue>;
}

/// Deepest nesting accepted (the real configuration needs 4).
const MAX_DEPTH: usize = 32;

/// The configuration value: `env.EDGESHED` as an object or JSON string. A
/// missing or unreadable binding is an error: the gateway fails closed.
pub(crate) fn config_value(env: &JsValue) -> Result<Value, ConfigError> {
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
    let parsed;
    let source = if let Some(text) = binding.as_string() {
        parsed = parse_json(&text)?;
        &parsed
    } else {
        &binding
    };
    to_value(source, "EDGESHED", 0)
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

/// `value[index]`, or an error naming `path` if reading it throws.
fn item(value: &JsValue, index: u32, path: &str) -> Result<JsValue, ConfigError> {
    js_sys::Reflect::get_u32(value, index).map_err(|error| unreadable(path, &error))
}

fn unreadable(path: &str, error: &JsValue) -> ConfigError {
    ConfigError::new(format!("{path} could not be read ({})", message_of(error)))
}

fn to_value(value: &JsValue, path: &str, depth: usize) -> Result<Value, ConfigError> {
    if depth > MAX_DEPTH {
        return Err(ConfigError::new(format!("{path} is nested too deeply")));
    }
    if value.is_undefined() || value.is_null() {
        return Ok(Value::Null);
    }
    if let Some(flag) = value.as_bool() {
        return Ok(Value::Bool(flag));
    }
    if let Some(number) = value.as_f64() {
        return Ok(Value::Number(number));
    }
    if let Some(text) = value.as_string() {
        return Ok(Value::String(text));
    }
    if value.is_object() && !value.is_function() {
        let array = is_array(value).map_err(|error| unreadable(path, &error))?;
        if array {
            let length = js_sys::Reflect::get(value, &"length".into())
                .map_err(|error| unreadable(path, &error))?
                .as_f64()
                .unwrap_or(0.0) as u32;
            let mut out = Vec::new();
            for index in 0..length {
                let at = format!("{path}[{index}]");
                out.push(to_value(&item(value, index, &at)?, &at, depth + 1)?);
            }
            return Ok(Value::Array(out));
        }
        let entries = entries_of(value).map_err(|error| unreadable(path, &error))?;
        let mut out = Vec::with_capacity(entries.length() as usize);
        for index in 0..entries.length() {
            let entry = item(&entries, index, path)?;
            let key = item(&entry, 0, path)?.as_string().unwrap_or_default();
            let at = format!("{path}.{key}");
            let value = item(&entry, 1, &at)?;
            out.push((key.clone(), to_value(&value, &at, depth + 1)?));
        }
        return Ok(Value::Object(out));
    }
    Err(ConfigError::new(format!(
        "{path} has an unsupported value (a {})",
        value.js_typeof().as_string().unwrap_or_default()
    )))
}
