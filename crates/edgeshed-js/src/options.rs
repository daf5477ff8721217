//! Validation of the options JavaScript passes in. Every refusal names the
//! option and what was wrong with it; nothing a caller passes can trap.

use crate::errors::{range_error, type_error};
use core::time::Duration;
use edgeshed::admission::Policy;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::AbortSignal;

/// The largest `maxInFlight` / `maxQueue` accepted.
const MAX_COUNT: f64 = 1_000_000.0;
/// The largest millisecond value: what `setTimeout` accepts (2^31 - 1).
const MAX_MILLIS: f64 = 2_147_483_647.0;

/// `bodyTimeoutMs` when not given: 30 s.
const DEFAULT_BODY_TIMEOUT_MS: f64 = 30_000.0;

/// Validated `new Limiter(options)` options.
#[derive(Debug)]
pub(crate) struct LimiterOptions {
    pub(crate) max_in_flight: usize,
    pub(crate) policy: Policy,
    /// The longest a `fetch` response body may sit idle holding its slot.
    pub(crate) body_timeout_ms: u32,
}

/// Validated per-call options of `run` (and the edgeshed keys of `fetch`'s `init`).
#[derive(Debug, Default)]
pub(crate) struct CallOptions {
    pub(crate) signal: Option<AbortSignal>,
    pub(crate) deadline: Option<Duration>,
}

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/glue.js")]
extern "C" {
    /// `"null"`, a number as JavaScript prints it, or the value's `typeof`
    /// (printing numbers in JavaScript keeps float formatting out of the wasm).
    #[wasm_bindgen(js_name = describeValue)]
    fn describe(value: &JsValue) -> String;

    /// The first own key of `object` that is a near miss of `key` (the
    /// same but for case, or at most two edits away) without being `key`.
    #[wasm_bindgen(js_name = nearMissKey)]
    fn near_miss_key(object: &JsValue, key: &str) -> Option<String>;
}

/// Reads `object[key]`, turning a throwing getter into a `TypeError`.
fn get(object: &JsValue, key: &str, what: &str) -> Result<JsValue, JsValue> {
    js_sys::Reflect::get(object, &JsValue::from_str(key))
        .map_err(|_| type_error(&format!("{what}.{key} could not be read")))
}

/// An optional integer option within `[min, max]`.
fn integer(
    object: &JsValue,
    key: &str,
    what: &str,
    min: f64,
    max: f64,
) -> Result<Option<f64>, JsValue> {
    let value = get(object, key, what)?;
    if value.is_undefined() {
        return Ok(None);
    }
    let Some(number) = value.as_f64() else {
        return Err(type_error(&format!(
            "{what}.{key} must be a number, got {}",
            describe(&value)
        )));
    };
    if !number.is_finite() || number.fract() != 0.0 || number < min || number > max {
        return Err(range_error(&format!(
            "{what}.{key} must be an integer from {} to {}, got {}",
            min as u64,
            max as u64,
            describe(&value)
        )));
    }
    Ok(Some(number))
}

/// Rejects keys other than `known` (they are usually typos such as `maxInflight`).
fn reject_unknown_keys(object: &JsValue, known: &[&str], what: &str) -> Result<(), JsValue> {
    let Some(object) = object.dyn_ref::<js_sys::Object>() else {
        return Ok(());
    };
    for key in js_sys::Object::keys(object).iter() {
        let key = key.as_string().unwrap_or_default();
        if !known.contains(&key.as_str()) {
            return Err(type_error(&format!(
                "{what}.{key} is not a known option (expected one of: {})",
                known.join(", ")
            )));
        }
    }
    Ok(())
}

fn require_object(value: &JsValue, what: &str) -> Result<(), JsValue> {
    if value.is_object() && !value.is_function() {
        Ok(())
    } else {
        Err(type_error(&format!(
            "{what} must be an object, got {}",
            describe(value)
        )))
    }
}

/// Parses `new Limiter({ maxInFlight, maxQueue, queueTimeoutMs, bodyTimeoutMs })`.
pub(crate) fn limiter_options(options: &JsValue) -> Result<LimiterOptions, JsValue> {
    const WHAT: &str = "options";
    require_object(options, WHAT)?;
    reject_unknown_keys(
        options,
        &["maxInFlight", "maxQueue", "queueTimeoutMs", "bodyTimeoutMs"],
        WHAT,
    )?;
    let max_in_flight = integer(options, "maxInFlight", WHAT, 1.0, MAX_COUNT)?
        .ok_or_else(|| type_error("options.maxInFlight is required"))?;
    let max_queue = integer(options, "maxQueue", WHAT, 0.0, MAX_COUNT)?.unwrap_or(0.0);
    let queue_timeout = integer(options, "queueTimeoutMs", WHAT, 0.0, MAX_MILLIS)?;
    let body_timeout = integer(options, "bodyTimeoutMs", WHAT, 1.0, MAX_MILLIS)?
        .unwrap_or(DEFAULT_BODY_TIMEOUT_MS);
    let policy = match (max_queue as usize, queue_timeout) {
        (0, _) => Policy::Shed,
        (_, None) => {
            return Err(type_error(
                "options.queueTimeoutMs is required when options.maxQueue > 0 (every wait must be bounded)",
            ))
        }
        (_, Some(timeout)) if timeout < 1.0 => {
            return Err(range_error(
                "options.queueTimeoutMs must be at least 1 when options.maxQueue > 0",
            ))
        }
        (max_queue, Some(timeout)) => Policy::Queue {
            max_queue,
            timeout: Duration::from_millis(timeout as u64),
        },
    };
    Ok(LimiterOptions {
        max_in_flight: max_in_flight as usize,
        policy,
        body_timeout_ms: body_timeout as u32,
    })
}

/// Reads `signal` and `deadlineMs` from `object`. With `strict`, other keys
/// are refused (`run`'s options); without, they are left for `fetch`, except
/// near misses of `deadlineMs` (`deadlineMS`, `deadline`, `deadlineMs ` ...),
/// which `fetch` would ignore silently: those are refused too.
pub(crate) fn call_options(
    object: &JsValue,
    what: &str,
    strict: bool,
) -> Result<CallOptions, JsValue> {
    if object.is_undefined() || object.is_null() {
        return Ok(CallOptions::default());
    }
    require_object(object, what)?;
    if strict {
        reject_unknown_keys(object, &["signal", "deadlineMs"], what)?;
    } else if let Some(typo) = near_miss_key(object, "deadlineMs") {
        return Err(type_error(&format!(
            "{what}.{typo} is not an option: did you mean {what}.deadlineMs?"
        )));
    }
    let signal = get(object, "signal", what)?;
    let signal = if signal.is_undefined() || signal.is_null() {
        None
    } else {
        Some(signal.dyn_into::<AbortSignal>().map_err(|other| {
            type_error(&format!(
                "{what}.signal must be an AbortSignal, got {}",
                describe(&other)
            ))
        })?)
    };
    let deadline = integer(object, "deadlineMs", what, 0.0, MAX_MILLIS)?
        .map(|millis| Duration::from_millis(millis as u64));
    Ok(CallOptions { signal, deadline })
}
