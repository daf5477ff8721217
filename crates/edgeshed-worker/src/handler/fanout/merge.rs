//! The answer of a fan-out whose required calls all succeeded: every
//! result keyed by origin name, and the optional origins that failed.

use super::call::Outcome;
use crate::config::FanOutCall;
use crate::handler::gateway::Gateway;
use crate::handler::respond::ResponseParts;
use crate::metrics::Timing;
use core::time::Duration;
use wasm_bindgen::JsValue;

/// `Server-Timing`: the global admission, then each call that finished
/// (`<name>-queue`, its admission; `<name>`, its call).
pub(super) fn timings(
    gateway: &Gateway,
    admission: Duration,
    calls: &[FanOutCall],
    outcomes: &[Option<Outcome>],
) -> Vec<Timing> {
    let mut timings = vec![Timing {
        name: "admission".into(),
        duration: admission,
        description: None,
    }];
    for (call, outcome) in calls.iter().zip(outcomes) {
        let (Some(origin), Some(outcome)) = (gateway.origin(call.origin), outcome) else {
            continue;
        };
        let name = &origin.config.name;
        timings.push(Timing {
            name: format!("{name}-queue"),
            duration: outcome.waited,
            description: None,
        });
        timings.push(Timing {
            name: name.clone(),
            duration: outcome.took,
            description: Some(format!("origin {name}")),
        });
    }
    timings
}

/// 200 `{"results": {...}, "degraded": [...]}`, with `x-edgeshed-degraded`
/// naming the failed (optional) origins, if any.
pub(super) fn merged(
    gateway: &Gateway,
    calls: &[FanOutCall],
    outcomes: Vec<Option<Outcome>>,
    timings: Vec<Timing>,
) -> Result<web_sys::Response, JsValue> {
    let results = js_sys::Object::new();
    let mut degraded: Vec<String> = Vec::new();
    for (call, outcome) in calls.iter().zip(outcomes) {
        let Some(origin) = gateway.origin(call.origin) else {
            continue;
        };
        let name = &origin.config.name;
        match outcome.map(|o| o.result) {
            Some(Ok(value)) => {
                js_sys::Reflect::set(&results, &JsValue::from_str(name), &value)?;
            }
            _ => {
                if !degraded.contains(name) {
                    degraded.push(name.clone());
                }
            }
        }
    }
    let body = js_sys::Object::new();
    js_sys::Reflect::set(&body, &"results".into(), &results)?;
    let degraded_js: js_sys::Array = degraded
        .iter()
        .map(|name| JsValue::from_str(name))
        .collect();
    js_sys::Reflect::set(&body, &"degraded".into(), &degraded_js)?;
    let text = js_sys::JSON::stringify(&body)?
        .as_string()
        .unwrap_or_default();
    let mut parts = ResponseParts::json(200, text).timings(timings);
    if !degraded.is_empty() {
        parts = parts.header("x-edgeshed-degraded", &degraded.join(", "));
    }
    parts.into_response()
}
