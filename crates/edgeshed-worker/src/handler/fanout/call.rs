//! One call of a fan-out: through its origin's pipeline, then its JSON
//! body read within the same time limit.

use crate::config::FanOutCall;
use crate::failure::Failure;
use crate::gate::AdmissionGate;
use crate::handler::host::{cancel_body, read_text_limited, too_large};
use crate::handler::origin::{CallError, CallPlan, OriginRuntime, Outgoing};
use core::time::Duration;
use edgeshed::time::{Clock, Instant};
use edgeshed_wasm::JsClock;
use wasm_bindgen::prelude::*;

/// What one origin call produced.
pub(super) struct Outcome {
    pub(super) result: Result<JsValue, Failure>,
    /// Time waited for admission.
    pub(super) waited: Duration,
    /// Time from its request to its body read.
    pub(super) took: Duration,
}

/// What a fan-out call shares with its siblings.
pub(super) struct Siblings<'r> {
    pub(super) deadline: Option<Instant>,
    pub(super) request: &'r web_sys::Request,
    pub(super) ctx: &'r JsValue,
    /// Opens once every required call is admitted.
    pub(super) gate: &'r AdmissionGate,
    /// The request's criticality and fairness key.
    pub(super) call: &'r edgeshed::admission::Call,
}

/// A GET to the origin's URL joined with the call's path, carrying only
/// the client's `accept` header.
fn outgoing(
    origin: &crate::config::Origin,
    call: &FanOutCall,
    request: &web_sys::Request,
) -> Result<Outgoing, JsValue> {
    let url = origin.url.join_configured(&call.path);
    let init = web_sys::RequestInit::new();
    init.set_method("GET");
    let headers = web_sys::Headers::new()?;
    // Read here, not per request: a shed request never needs it.
    if let Some(accept) = request.headers().get("accept").ok().flatten() {
        let _ = headers.set("accept", &accept);
    }
    init.set_headers(&headers);
    Ok(Outgoing { url, init })
}

/// Calls `origin` for `call`, once every required sibling is admitted
/// (`ticket`: its place in the request's budget order), and reads its body.
pub(super) async fn call_origin(
    origin: &OriginRuntime,
    call: &FanOutCall,
    siblings: &Siblings<'_>,
    ticket: crate::budget::Ticket<'_>,
) -> Outcome {
    let plan = CallPlan {
        deadline: siblings.deadline,
        ctx: siblings.ctx,
        ticket: Some(ticket),
        ready: siblings.gate.admitted(call.origin, call.required),
        call: siblings.call,
    };
    let called = origin
        .call(plan, |config| outgoing(config, call, siblings.request))
        .await;
    let (waited, took, failure) = match called {
        Ok(called) => {
            let result = read_json(called.response, called.limit, called.abort, origin).await;
            let took = JsClock.now().saturating_duration_since(called.started);
            drop(called.permit);
            return Outcome {
                result,
                waited: called.waited,
                took,
            };
        }
        Err(CallError::Refused { failure, waited }) => (waited, Duration::ZERO, failure),
        Err(CallError::Failed {
            failure,
            waited,
            took,
        }) => (waited, took, failure),
        Err(CallError::Internal(_)) => (Duration::ZERO, Duration::ZERO, Failure::Unreachable),
    };
    Outcome {
        result: Err(failure),
        waited,
        took,
    }
}

/// A 2xx body parsed as JSON (kept as text if it is not), read within the
/// call's limit and at most the origin's `maxBodyBytes`.
async fn read_json(
    response: web_sys::Response,
    mut limit: crate::handler::origin::CallLimit,
    abort: crate::handler::origin::AbortOnDrop,
    origin: &OriginRuntime,
) -> Result<JsValue, Failure> {
    let status = response.status();
    if !(200..300).contains(&status) {
        cancel_body(&response);
        return Err(Failure::Status(status));
    }
    let body = read_text_limited(&response, origin.config.max_body_bytes as f64);
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
