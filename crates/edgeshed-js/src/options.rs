//! The options JavaScript passes in, validated by `options.js` and
//! `call-options.js` (every refusal a `TypeError`/`RangeError` naming the
//! option; kinds, ranges and defaults from `options-schema.js`, rendered from
//! the core's [`options_schema`](edgeshed::options_schema)) and turned into
//! the core's types here. Nothing a caller passes can trap.

use crate::criticality::criticality_at;
use crate::host::{call_error, call_facts, call_key, call_signal, limiter_options_js};
use core::time::Duration;
use edgeshed::admission::{
    Call, Criticality, Options, Policy, QueueDiscipline, QueueWait, Reserve,
};
use edgeshed::limit::adaptive::{AnyLimit, Bounds};
use edgeshed::rate_limit::Rate;
use edgeshed::Key;
use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

/// Validated `new Limiter(options)` options.
#[derive(Debug)]
pub(crate) struct LimiterOptions {
    /// `maxInFlight` or `adaptive`.
    pub(crate) limit: LimitOption,
    pub(crate) policy: Policy,
    /// The queue discipline and rate limit, and the reserve if given.
    pub(crate) options: Options,
    /// `reserve` was not given: the default reserve, kept from the first
    /// call that names its criticality (see [`CallCounters`](crate::counters::CallCounters)).
    pub(crate) default_reserve: bool,
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
    /// `criticality` (default `"default"`).
    pub(crate) criticality: Criticality,
    /// Whether `criticality` was given.
    pub(crate) classified: bool,
    /// `key`, for fair queueing and the rate limit.
    pub(crate) key: Option<Key>,
    /// `fairWeight` (1 when not given): the key's weight in fair queueing.
    pub(crate) weight: u32,
}

/// Parses `new Limiter({ maxInFlight | adaptive, maxQueue, queueTimeoutMs,
/// bodyTimeoutMs, reserve, queueDiscipline, codelTargetMs, maxQueueWait, rate })`.
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
        options: class_options(&at)?,
        default_reserve: at(8) < 0.0,
        body_timeout_ms: at(7) as u32,
    })
}

/// The reserve (if given), queue discipline, queue wait and rate limit of
/// `limiterOptions`'s values 8 to 15 (options.js checked them in the options' own names; a refusal of
/// the core's is a `RangeError` naming its parameter all the same).
fn class_options(at: &dyn Fn(usize) -> f64) -> Result<Options, JsValue> {
    let range_error =
        |error: edgeshed::InvalidConfig| crate::errors::range_error(&error.to_string());
    let mut options = Options::new();
    if at(8) >= 0.0 {
        options = options.reserve(Reserve::new(at(8), at(9)).map_err(range_error)?);
    }
    if at(10) > 0.0 {
        options = options.discipline(QueueDiscipline::Codel {
            target: Duration::from_millis(at(10) as u64),
        });
    }
    if at(15) > 0.0 {
        options = options.queue_wait(QueueWait::Auto);
    }
    let count = at(11) as u64;
    if count > 0 {
        let rate = if at(12) >= 60.0 {
            Rate::per_minute(count)
        } else {
            Rate::per_second(count)
        };
        let rate = rate
            .and_then(|rate| rate.with_burst(at(13) as u64))
            .and_then(|rate| rate.with_max_keys(at(14) as usize))
            .map_err(range_error)?;
        options = options.rate(rate);
    }
    Ok(options)
}

/// Reads `signal`, `deadlineMs`, `criticality`, `key` and `fairWeight`
/// from `object`. With `strict`, other keys are refused (`run`'s options,
/// named `options` in the errors); without, they are left for `fetch` (its
/// `init`: near misses of `deadlineMs`, `criticality` and `fairWeight` are
/// refused all the same, see call-options.js).
pub(crate) fn call_options(object: &JsValue, strict: bool) -> Result<CallOptions, JsValue> {
    // One crossing for any `object`, `undefined` included (a check for it
    // here would be a crossing of its own).
    let facts = call_facts(object, strict);
    if facts < 0.0 {
        return Err(call_error());
    }
    Ok(options_of_facts(facts, &call_key))
}

/// The options `callFacts` read as `facts` (a number it returned, not -1):
/// the signal is fetched from call-options.js, which keeps it, the key from
/// `key()` when the facts say there is one.
/// (`dyn`: one copy of this function in the wasm for both callers.)
pub(crate) fn options_of_facts(facts: f64, key: &dyn Fn() -> String) -> CallOptions {
    // An integer below 2^46: exact in an f64 and a u64.
    let facts = facts as u64;
    let rank = criticality_at(facts % 4);
    let classified = rank.is_some();
    // `callFacts` checked that the signal is an AbortSignal.
    let signal = (facts / 4 % 2 == 1).then(call_signal);
    let key = (facts / 8 % 2 == 1).then(|| {
        edgeshed_wasm::seed_keys();
        Key::from(key())
    });
    let weights = u64::from(Call::MAX_WEIGHT);
    let weight = facts / 16 % weights + 1;
    let deadline = (facts / 16 / weights).checked_sub(1);
    CallOptions {
        signal,
        deadline: deadline.map(Duration::from_millis),
        criticality: rank.unwrap_or_default(),
        classified,
        key,
        // At most Call::MAX_WEIGHT, by the modulo.
        weight: weight as u32,
    }
}
