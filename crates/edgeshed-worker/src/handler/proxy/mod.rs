//! Prefix routes: stream the request to one origin and its answer back,
//! holding the global and the origin permit until the body has been sent.

mod headers;
mod held;

pub(crate) use held::held_bodies;

use super::gateway::Gateway;
use super::origin::{Answered, CallError, Outgoing};
use super::respond::{error_json, ResponseParts};
use super::route::Admitting;
use crate::failure::{relayable_status, Failure, Scope};
use crate::handler::host::cancel_body;
use edgeshed::time::{Clock, Instant};
use edgeshed_wasm::JsClock;
use headers::forwardable;
use wasm_bindgen::prelude::*;

fn not_found() -> Result<web_sys::Response, JsValue> {
    ResponseParts::json(404, error_json("not_found", &[])).into_response()
}

/// The request to the origin: the client's method, headers (minus
/// hop-by-hop ones) and body, to `target`; redirects are passed back.
fn outgoing(request: &web_sys::Request, target: String) -> Result<Outgoing, JsValue> {
    let init = web_sys::RequestInit::new();
    let method = request.method();
    init.set_method(&method);
    let headers = web_sys::Headers::new()?;
    for (name, value) in forwardable(&request.headers(), &["host", "content-length"]) {
        headers.append(&name, &value)?;
    }
    init.set_headers(&headers);
    if method != "GET" && method != "HEAD" {
        if let Some(body) = request.body() {
            init.set_body(&body);
        }
    }
    init.set_redirect(web_sys::RequestRedirect::Manual);
    Ok(Outgoing { url: target, init })
}

/// Answers a prefix route for origin `origin_index`: `rest` (the path after
/// the prefix) and `query` joined to the origin's URL, admitted as
/// `admitting` says.
pub(crate) async fn respond(
    gateway: &Gateway,
    (request, ctx): (&web_sys::Request, &JsValue),
    (entry, admitting): (Instant, Admitting<'_>),
    origin_index: usize,
    (rest, query): (&str, Option<&str>),
) -> Result<web_sys::Response, JsValue> {
    let Some(origin) = gateway.origin(origin_index) else {
        return not_found();
    };
    let name = origin.config.name.as_str();
    // The client never picks the host: the URL is built from the configured
    // origin, and checked once more by the platform's URL parser.
    let Ok(target) = origin.config.url.join_untrusted(rest, query) else {
        return not_found();
    };
    // Both sides go through the same parser, which drops default ports and
    // canonicalises hosts (`127.1` is `127.0.0.1`).
    let configured = web_sys::Url::new(origin.config.url.origin()).map(|url| url.origin());
    match (web_sys::Url::new(&target), configured) {
        (Ok(parsed), Ok(configured)) if parsed.origin() == configured => {}
        _ => return not_found(),
    }
    let retry_after = gateway.config.retry_after_seconds;
    // A prefix route has no deadline: its time limit is the origin's own.
    let global = match gateway
        .global
        .admit(entry, None, admitting, retry_after)
        .await
    {
        Ok(admitted) => admitted,
        Err(refused) => return refused.into_response(),
    };
    let called = match origin
        .acquire(admitting.call, None, ctx, JsClock.now())
        .await
    {
        Ok(admitted) => {
            origin
                .send(admitted, None, |_| outgoing(request, target))
                .await
        }
        Err((failure, waited)) => Err(CallError::Refused { failure, waited }),
    };
    let admission = global.waited;
    let timed = |parts: ResponseParts, waited, took| {
        parts
            .timing("admission", admission)
            .timing(&format!("{name}-queue"), waited)
            .timing(name, took)
    };
    let refused = |failure| {
        ResponseParts::failure(failure, Scope::Origin(name), admitting.route, retry_after)
    };
    let Answered {
        response,
        permit,
        limit,
        abort,
        waited,
        took,
        ..
    } = match called {
        Ok(call) => call,
        Err(CallError::Refused { failure, .. }) => {
            return refused(failure)
                .timing("admission", admission)
                .into_response()
        }
        Err(CallError::Failed {
            failure,
            waited,
            took,
        }) => return timed(refused(failure), waited, took).into_response(),
        Err(CallError::Internal(error)) => return Err(error),
    };
    // A status no `Response` can carry (101, or outside 200-599) is the
    // origin's failure: its body is cancelled and, as the fetch is aborted
    // (`abort` dropped armed), both permits come back before the 502 leaves.
    let status = response.status();
    if !relayable_status(status) {
        cancel_body(&response);
        drop((permit, global, abort));
        return timed(refused(Failure::Status(status)), waited, took).into_response();
    }
    drop(limit);
    abort.disarm();
    let headers = forwardable(&response.headers(), &["content-length"]);
    let idle = origin
        .config
        .timeout
        .unwrap_or(crate::config::DEFAULT_ORIGIN_TIMEOUT);
    let body = held::hold(&response, (permit, global.permit), ctx, idle)?;
    timed(ResponseParts::stream(status, body, headers), waited, took).into_response()
}
