//! One call of a fan-out: its turn in the request's admission, then its
//! origin's fetch and its JSON body read within the same time limit.

use crate::config::FanOutCall;
use crate::failure::Failure;
use crate::fanout_admission::FanOutAdmission;
use crate::handler::host::{cancel_body, read_text_limited, too_large};
use crate::handler::origin::{Acquiring, CallError, OriginRuntime, Outgoing};
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
pub(super) struct Siblings<'s, 'r> {
    pub(super) deadline: Option<Instant>,
    pub(super) request: &'r web_sys::Request,
    /// Takes every call's permits in order, all-or-nothing.
    pub(super) admission: &'s FanOutAdmission<Acquiring<'r>>,
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

/// Calls `origin` for the call at `position` (`call`) once its turn in the
/// request's admission comes, and reads its body.
pub(super) async fn call_origin(
    origin: &OriginRuntime,
    (position, call): (usize, &FanOutCall),
    siblings: &Siblings<'_, '_>,
) -> Outcome {
    let turn = siblings.admission.turn(position);
    let admitted = match turn {
        Some(turn) => turn.await,
        None => Err((Failure::Unreachable, Duration::ZERO)),
    };
    let called = match admitted {
        Ok(admitted) => {
            let request = |config: &_| outgoing(config, call, siblings.request);
            origin.send(admitted, siblings.deadline, request).await
        }
        Err((failure, waited)) => Err(CallError::Refused { failure, waited }),
    };
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
