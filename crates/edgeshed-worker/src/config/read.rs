//! Reading typed fields out of a configuration [`Value`]: every error names
//! the key (its dotted path) that is wrong.

use super::ConfigError;
use crate::value::Value;
use core::time::Duration;

/// Largest accepted count (`maxInFlight`, `maxQueue`).
pub(super) const MAX_COUNT: f64 = 1_000_000.0;
/// Largest accepted millisecond value (what `setTimeout` accepts).
const MAX_MILLIS: f64 = 2_147_483_647.0;

/// A result whose error names the key at fault.
pub(super) type Result<T> = core::result::Result<T, ConfigError>;

/// An error with this message.
pub(super) fn error<T>(message: String) -> Result<T> {
    Err(ConfigError::new(message))
}

/// The entries of an object at `path`, refusing keys outside `known`.
pub(super) fn object<'v>(
    value: &'v Value,
    path: &str,
    known: &[&str],
) -> Result<&'v [(String, Value)]> {
    let Value::Object(entries) = value else {
        return error(format!("{path} must be an object, got {}", value.kind()));
    };
    for (key, _) in entries {
        if !known.contains(&key.as_str()) {
            let at = join(path, key);
            return error(format!(
                "{at} is not a known key (expected one of: {})",
                known.join(", ")
            ));
        }
    }
    Ok(entries)
}

/// `path.key` (or `key` at the top level).
pub(super) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The entry `key`, treating `null` as omitted.
pub(super) fn field<'v>(entries: &'v [(String, Value)], key: &str) -> Option<&'v Value> {
    entries
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
        .filter(|v| !matches!(v, Value::Null))
}

/// An optional integer in `[min, max]` at `path`.
pub(super) fn integer(
    value: Option<&Value>,
    path: &str,
    min: f64,
    max: f64,
    what: &str,
) -> Result<Option<f64>> {
    let Some(value) = value else {
        return Ok(None);
    };
    match value {
        Value::Number(n) if n.is_finite() && n.fract() == 0.0 && *n >= min && *n <= max => {
            Ok(Some(*n))
        }
        Value::Number(n) => error(format!(
            "{path} must be {what}, got {}",
            describe_number(*n)
        )),
        other => error(format!("{path} must be {what}, got {}", other.kind())),
    }
}

/// A number for an error message, without float formatting (which would
/// pull tens of KiB of code into the worker's wasm): integers exactly, other
/// values to three decimals.
fn describe_number(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n.is_infinite() {
        return if n > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    if n.fract() == 0.0 && n.abs() < 1e15 {
        return format!("{}", n as i64);
    }
    if n.abs() >= 1e15 {
        return "a number too large".into();
    }
    let thousandths = (n.abs() * 1000.0).round() as u64;
    let sign = if n < 0.0 { "-" } else { "" };
    format!("{sign}{}.{:03}", thousandths / 1000, thousandths % 1000)
}

/// An optional string at `path`.
pub(super) fn string<'v>(value: Option<&'v Value>, path: &str) -> Result<Option<&'v str>> {
    match value {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => error(format!("{path} must be a string, got {}", other.kind())),
    }
}

/// An optional positive number of milliseconds at `path`.
pub(super) fn millis(value: Option<&Value>, path: &str) -> Result<Option<Duration>> {
    Ok(integer(
        value,
        path,
        1.0,
        MAX_MILLIS,
        "a positive integer (milliseconds)",
    )?
    .map(|ms| Duration::from_millis(ms as u64)))
}

/// An optional boolean at `path`.
pub(super) fn boolean(value: Option<&Value>, path: &str) -> Result<Option<bool>> {
    match value {
        None => Ok(None),
        Some(Value::Bool(flag)) => Ok(Some(*flag)),
        Some(other) => error(format!("{path} must be a boolean, got {}", other.kind())),
    }
}
