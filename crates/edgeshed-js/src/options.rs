//! The options JavaScript passes in, validated by `options.js` (every
//! refusal a `TypeError`/`RangeError` naming the option) and turned into the
//! core's types here. Nothing a caller passes can trap.

use core::time::Duration;
use edgeshed::admission::Policy;
use edgeshed::limit::adaptive::{AnyLimit, Bounds};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::AbortSignal;

/// Validated `new Limiter(options)` options.
#[derive(Debug)]
pub(crate) struct LimiterOptions {
    /// `maxInFlight` or `adaptive`.
    pub(crate) limit: LimitOption,
    pub(crate) policy: Policy,
    /// The longest a `fetch` response body may sit idle holding its slot.
    pub(crate) body_timeout_ms: u32,
}

/// How a limiter's limit is set: exactly one of `maxInFlight` and `adaptive`.
// Built once per Limiter and moved into it: the size of the adaptive
// variant's state (windows, drains) costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum LimitOption {
    /// `maxInFlight`: a fixed limit (`setLimit` may change it).
    Fixed(usize),
    /// `adaptive`: the algorithm, with its bounds, that moves the limit.
    Adaptive(AnyLimit),
}

/// Validated per-call options of `run` (and the edgeshed keys of `fetch`'s `init`).
#[derive(Debug, Default)]
pub(crate) struct CallOptions {
    pub(crate) signal: Option<AbortSignal>,
    pub(crate) deadline: Option<Duration>,
}

#[wasm_bindgen(module = "/src/options.js")]
extern "C" {
    /// `[maxInFlight, algorithm, initialLimit, minLimit, maxLimit, maxQueue,
    /// queueTimeoutMs, bodyTimeoutMs]`, validated (see options.js); the
    /// algorithm is an index into [`AnyLimit::NAMES`], -1 for a fixed limit.
    #[wasm_bindgen(js_name = limiterOptions, catch)]
    fn limiter_options_js(options: &JsValue) -> Result<Vec<f64>, JsValue>;

    /// The validated `signal` of call options (undefined when none); keeps
    /// their `deadlineMs` for [`call_deadline`].
    #[wasm_bindgen(js_name = callSignal, catch)]
    fn call_signal(object: &JsValue, what: &str, strict: bool) -> Result<JsValue, JsValue>;

    /// The `deadlineMs` read by the last [`call_signal`], -1 for none.
    #[wasm_bindgen(js_name = callDeadline)]
    fn call_deadline() -> f64;

    /// `setLimit`'s argument, validated: an integer from 1 to 1,000,000.
    #[wasm_bindgen(js_name = checkedLimit, catch)]
    pub(crate) fn checked_limit(limit: &JsValue) -> Result<f64, JsValue>;
}

/// Parses `new Limiter({ maxInFlight | adaptive, maxQueue, queueTimeoutMs, bodyTimeoutMs })`.
pub(crate) fn limiter_options(options: &JsValue) -> Result<LimiterOptions, JsValue> {
    let values = limiter_options_js(options)?;
    let at = |index: usize| values.get(index).copied().unwrap_or(0.0);
    // A fixed limit's -1 saturates to 0 in the cast: the sign decides.
    let algorithm = (at(1) >= 0.0)
        .then(|| AnyLimit::NAMES.get(at(1) as usize))
        .flatten();
    let limit = match algorithm {
        Some(name) => {
            // options.js checked the bounds in the options' own names.
            let bounds = Bounds::new(at(2) as usize, at(3) as usize, at(4) as usize)
                .map_err(|error| crate::errors::range_error(&error.to_string()))?;
            let algorithm = AnyLimit::named(name, bounds)
                .map_err(|error| crate::errors::type_error(&error.to_string()))?;
            LimitOption::Adaptive(algorithm)
        }
        None => LimitOption::Fixed(at(0) as usize),
    };
    let policy = match at(5) as usize {
        0 => Policy::Shed,
        max_queue => Policy::Queue {
            max_queue,
            timeout: Duration::from_millis(at(6) as u64),
        },
    };
    Ok(LimiterOptions {
        limit,
        policy,
        body_timeout_ms: at(7) as u32,
    })
}

/// Reads `signal` and `deadlineMs` from `object`. With `strict`, other keys
/// are refused (`run`'s options); without, they are left for `fetch` (near
/// misses of `deadlineMs` are refused all the same: see options.js).
pub(crate) fn call_options(
    object: &JsValue,
    what: &str,
    strict: bool,
) -> Result<CallOptions, JsValue> {
    if object.is_undefined() || object.is_null() {
        return Ok(CallOptions::default());
    }
    let signal = call_signal(object, what, strict)?;
    let deadline = call_deadline();
    Ok(CallOptions {
        // `callSignal` checked that it is an AbortSignal.
        signal: (!signal.is_undefined()).then(|| signal.unchecked_into()),
        deadline: (deadline >= 0.0).then(|| Duration::from_millis(deadline as u64)),
    })
}
