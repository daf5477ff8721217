//! Reading the `EDGESHED` binding (object or JSON string) into a [`Value`].

use super::state::DEMO_CONFIG;
use crate::worker::config::ConfigError;
use crate::worker::value::Value;
use wasm_bindgen::{JsCast, JsValue};

/// Deepest nesting accepted (the real configuration needs 4).
const MAX_DEPTH: usize = 32;

/// The configuration value: `env.EDGESHED` as an object or JSON string, or
/// the embedded demo configuration when the binding is absent.
pub(crate) fn config_value(env: &JsValue) -> Result<Value, ConfigError> {
    let binding = if env.is_object() {
        js_sys::Reflect::get(env, &"EDGESHED".into()).unwrap_or(JsValue::UNDEFINED)
    } else {
        JsValue::UNDEFINED
    };
    let parsed;
    let source = if binding.is_undefined() || binding.is_null() {
        parsed = parse_json(DEMO_CONFIG)?;
        &parsed
    } else if let Some(text) = binding.as_string() {
        parsed = parse_json(&text)?;
        &parsed
    } else {
        &binding
    };
    to_value(source, "EDGESHED", 0)
}

fn parse_json(text: &str) -> Result<JsValue, ConfigError> {
    js_sys::JSON::parse(text).map_err(|error| {
        let why = js_sys::Reflect::get(&error, &"message".into())
            .ok()
            .and_then(|m| m.as_string())
            .unwrap_or_default();
        ConfigError::new(format!("EDGESHED is not valid JSON: {why}"))
    })
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
    if let Some(array) = value.dyn_ref::<js_sys::Array>() {
        return array
            .iter()
            .enumerate()
            .map(|(i, item)| to_value(&item, &format!("{path}[{i}]"), depth + 1))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array);
    }
    if value.is_object() && !value.is_function() {
        let entries = js_sys::Object::entries(value.unchecked_ref());
        let mut out = Vec::with_capacity(entries.length() as usize);
        for entry in entries.iter() {
            let key = js_sys::Reflect::get_u32(&entry, 0)
                .ok()
                .and_then(|k| k.as_string())
                .unwrap_or_default();
            let item = js_sys::Reflect::get_u32(&entry, 1).unwrap_or(JsValue::UNDEFINED);
            let item = to_value(&item, &format!("{path}.{key}"), depth + 1)?;
            out.push((key, item));
        }
        return Ok(Value::Object(out));
    }
    Err(ConfigError::new(format!(
        "{path} has an unsupported value (a {})",
        value.js_typeof().as_string().unwrap_or_default()
    )))
}
