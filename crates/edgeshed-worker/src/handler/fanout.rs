//! Fan-out routes: call several origins concurrently and merge their JSON.

use super::concurrently::{until_decided, yield_once};
use super::origin_call::{admit_origin, fetch_within, time_limit, AbortOnDrop, CallLimit, Failure};
use super::refusal::Refusal;
use super::respond::{error_json, json_string, ResponseParts};
use super::state::Gateway;
use crate::budget::{BudgetOrder, Ticket};
use crate::config::FanOutCall;
use crate::metrics::Timing;
use core::time::Duration;
use edgeshed::admission::AdmitError;
use edgeshed::time::{Clock, Instant};
use edgeshed_wasm::JsClock;
use wasm_bindgen::JsValue;

/// What one origin call produced.
struct Outcome {
    result: Result<JsValue, Failure>,
    waited: Duration,
    took: Duration,
}

pub(crate) async fn respond(
    gateway: &Gateway,
    request: &web_sys::Request,
    entry: Instant,
    deadline: Option<Instant>,
    calls: &[FanOutCall],
    ctx: &JsValue,
) -> Result<web_sys::Response, JsValue> {
    let retry_after = gateway.config.retry_after_seconds.to_string();
    let admit = match deadline {
        Some(at) => gateway.global.admit_before(at),
        None => gateway.global.admit(),
    };
    let admitted = edgeshed_wasm::task::RemoteWake::new(admit).await;
    let waited = JsClock.now().saturating_duration_since(entry);
    gateway.metrics.borrow_mut().global_wait.observe(waited);
    let _global_permit = match admitted {
        Ok(permit) => permit,
        Err(AdmitError::Expired) => {
            return ResponseParts::json(504, error_json("deadline", &[]))
                .timing("admission", waited)
                .into_response()
        }
        Err(error) => {
            return Refusal::of(&error)
                .response("global", &retry_after)
                .timing("admission", waited)
                .into_response()
        }
    };
    let budgeted = |origin: usize| gateway.budgets.get(origin).is_some_and(Option::is_some);
    let order = BudgetOrder::new(calls.iter().map(|call| call.origin), budgeted);
    let futures: Vec<_> = calls
        .iter()
        .enumerate()
        .map(|(position, call)| {
            let ticket = order.ticket(call.origin, position);
            call_origin(
                gateway,
                call,
                deadline,
                request,
                ctx,
                calls.len() > 1,
                ticket,
            )
        })
        .collect();
    let (outcomes, decisive) = until_decided(futures, |index, outcome: &Outcome| {
        outcome.result.is_err() && calls.get(index).is_some_and(|call| call.required)
    })
    .await;

    let mut timings = vec![Timing {
        name: "admission".into(),
        duration: waited,
        description: None,
    }];
    for (call, outcome) in calls.iter().zip(&outcomes) {
        let (Some(origin), Some(outcome)) = (gateway.config.origins.get(call.origin), outcome)
        else {
            continue;
        };
        timings.push(Timing {
            name: format!("{}-queue", origin.name),
            duration: outcome.waited,
            description: None,
        });
        timings.push(Timing {
            name: origin.name.clone(),
            duration: outcome.took,
            description: Some(format!("origin {}", origin.name)),
        });
    }

    if let Some(index) = decisive {
        let name = calls
            .get(index)
            .and_then(|call| gateway.config.origins.get(call.origin))
            .map_or("", |origin| origin.name.as_str());
        let failure = outcomes
            .get(index)
            .and_then(|o| o.as_ref())
            .and_then(|o| o.result.as_ref().err().copied())
            .unwrap_or(Failure::Unreachable);
        let scope = format!("origin:{name}");
        let parts = match failure {
            Failure::Overloaded(refusal) => refusal.response(&scope, &retry_after),
            Failure::Deadline => ResponseParts::json(504, error_json("deadline", &[])),
            Failure::Timeout => {
                ResponseParts::json(504, error_json("timeout", &[("origin", name)]))
            }
            Failure::Unreachable => {
                ResponseParts::json(502, error_json("bad_gateway", &[("origin", name)]))
            }
            Failure::TooLarge => ResponseParts::json(
                502,
                error_json(
                    "bad_gateway",
                    &[("origin", name), ("reason", "body_too_large")],
                ),
            ),
            Failure::Status(status) => {
                let body = format!(
                    "{{\"error\":\"bad_gateway\",\"origin\":{},\"status\":{status}}}",
                    json_string(name)
                );
                ResponseParts::json(502, body)
            }
        };
        return parts.timings(timings).into_response();
    }

    let results = js_sys::Object::new();
    let mut degraded: Vec<String> = Vec::new();
    for (call, outcome) in calls.iter().zip(outcomes) {
        let Some(origin) = gateway.config.origins.get(call.origin) else {
            continue;
        };
        match outcome.map(|o| o.result) {
            Some(Ok(value)) => {
                js_sys::Reflect::set(&results, &JsValue::from_str(&origin.name), &value)?;
            }
            _ => {
                if !degraded.contains(&origin.name) {
                    degraded.push(origin.name.clone());
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

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/handler/glue.js")]
extern "C" {
    /// The body as text, or `null` once it exceeds `max` bytes (reading stops there).
    #[wasm_bindgen(js_name = readTextLimited)]
    fn read_text_limited(response: &web_sys::Response, max: f64) -> js_sys::Promise;
    /// Cancels the body of `response`, if any, ignoring errors.
    #[wasm_bindgen(js_name = cancelBody)]
    fn cancel_body(response: &web_sys::Response);
    /// Whether `readTextLimited` gave up on this response for its size.
    #[wasm_bindgen(js_name = tooLarge)]
    fn too_large(response: &web_sys::Response) -> bool;
}

/// Admits, fetches and reads one origin call. With `siblings`, the call
/// lets the others take their turn between its admission and its fetch;
/// `ticket` is its place in the request's budget order.
async fn call_origin(
    gateway: &Gateway,
    call: &FanOutCall,
    deadline: Option<Instant>,
    request: &web_sys::Request,
    ctx: &JsValue,
    siblings: bool,
    ticket: Ticket<'_>,
) -> Outcome {
    let start = JsClock.now();
    let admitted = admit_origin(gateway, call.origin, deadline, ctx, Some(&ticket)).await;
    // the next call in the budget order may take its permit
    drop(ticket);
    let (permit, waited) = match admitted {
        Ok(admitted) => admitted,
        Err(failure) => {
            return Outcome {
                result: Err(failure),
                waited: JsClock.now().saturating_duration_since(start),
                took: Duration::ZERO,
            }
        }
    };
    if siblings {
        // The calls are polled in order: without this, a call admitted at
        // once would start its fetch before a later required sibling is
        // shed in the same poll, and that fetch would be aborted at once:
        // a wasted origin request per such shed (with adaptive limits that
        // differ per origin, most sheds at overload). The task polls again
        // at once, in the same step.
        yield_once().await;
    }
    let fetch_start = JsClock.now();
    let result = fetch_json(gateway, call, deadline, request).await;
    let took = JsClock.now().saturating_duration_since(fetch_start);
    drop(permit);
    Outcome {
        result,
        waited,
        took,
    }
}

async fn fetch_json(
    gateway: &Gateway,
    call: &FanOutCall,
    deadline: Option<Instant>,
    request: &web_sys::Request,
) -> Result<JsValue, Failure> {
    let origin = gateway
        .config
        .origins
        .get(call.origin)
        .ok_or(Failure::Unreachable)?;
    let url = origin.url.join_configured(&call.path);
    let mut limit = CallLimit::new(time_limit(deadline, origin.timeout));
    let abort = AbortOnDrop::new().map_err(|_| Failure::Unreachable)?;
    let init = web_sys::RequestInit::new();
    init.set_method("GET");
    let headers = web_sys::Headers::new().map_err(|_| Failure::Unreachable)?;
    // Read here, not per request: a shed request never needs it.
    if let Some(accept) = request.headers().get("accept").ok().flatten() {
        let _ = headers.set("accept", &accept);
    }
    init.set_headers(&headers);
    let started = JsClock.now();
    let sampling = super::origin_limit::start(gateway, call.origin);
    let response = fetch_within(&url, &init, &mut limit, &abort).await;
    super::origin_limit::sample_fetch(sampling, &response);
    if let Some(histogram) = gateway
        .metrics
        .borrow_mut()
        .origin_duration
        .get_mut(call.origin)
    {
        histogram.observe(JsClock.now().saturating_duration_since(started));
    }
    let response = response?;
    let status = response.status();
    if !(200..300).contains(&status) {
        cancel_body(&response);
        return Err(Failure::Status(status));
    }
    let body = read_text_limited(&response, origin.max_body_bytes as f64);
    let text = limit.within(body, &abort).await?;
    abort.disarm();
    // `null` (not a string) means the reader gave up: the body is too large.
    let Some(text) = text.as_string() else {
        return Err(if too_large(&response) {
            Failure::TooLarge
        } else {
            Failure::Unreachable
        });
    };
    Ok(js_sys::JSON::parse(&text).unwrap_or_else(|_| JsValue::from_str(&text)))
}
