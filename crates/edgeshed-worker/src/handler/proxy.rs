//! Prefix routes: stream the request to one origin and its answer back,
//! holding the global and the origin permit until the body has been sent.

use super::origin_call::{admit_origin, fetch_within, time_limit, AbortOnDrop, CallLimit, Failure};
use super::refusal::Refusal;
use super::respond::{error_json, ResponseParts};
use super::state::Gateway;
use edgeshed::time::{Clock, Instant};
use edgeshed_wasm::JsClock;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/handler/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = pipeHeld, catch)]
    fn pipe_held(
        body: &web_sys::ReadableStream,
        release: JsValue,
        ctx: &JsValue,
        length: f64,
        idle_ms: f64,
    ) -> Result<web_sys::ReadableStream, JsValue>;
}

thread_local! {
    static HELD_BODIES: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
}

/// Proxied bodies still holding their permits (diagnostics).
pub(crate) fn held_bodies() -> usize {
    HELD_BODIES.with(core::cell::Cell::get)
}

/// Headers that describe one connection, not the message: never forwarded.
const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// The headers of `from` minus hop-by-hop ones (and those named in
/// `Connection`), minus `extra_excluded`.
fn forwardable(from: &web_sys::Headers, extra_excluded: &[&str]) -> Vec<(String, String)> {
    let named: Vec<String> = from
        .get("connection")
        .ok()
        .flatten()
        .map(|value| {
            value
                .split(',')
                .map(|v| v.trim().to_ascii_lowercase())
                .collect()
        })
        .unwrap_or_default();
    let mut kept = Vec::new();
    let Ok(Some(entries)) = js_sys::try_iter(from) else {
        return kept;
    };
    for entry in entries.flatten() {
        // `[name, value]` pairs, read through `Reflect` (which catches).
        let part = |index| {
            js_sys::Reflect::get_u32(&entry, index)
                .ok()
                .and_then(|v| v.as_string())
        };
        let (Some(name), Some(value)) = (part(0), part(1)) else {
            continue;
        };
        let lower = name.to_ascii_lowercase();
        if HOP_BY_HOP.contains(&lower.as_str())
            || named.contains(&lower)
            || extra_excluded.contains(&lower.as_str())
        {
            continue;
        }
        kept.push((lower, value));
    }
    kept
}

fn not_found() -> Result<web_sys::Response, JsValue> {
    ResponseParts::json(404, error_json("not_found", &[])).into_response()
}

#[allow(clippy::too_many_arguments)]
pub(crate) async fn respond(
    gateway: &Gateway,
    request: web_sys::Request,
    ctx: JsValue,
    entry: Instant,
    origin_index: usize,
    rest: &str,
    query: Option<&str>,
) -> Result<web_sys::Response, JsValue> {
    let Some(origin) = gateway.config.origins.get(origin_index) else {
        return not_found();
    };
    // The client never picks the host: the URL is built from the configured
    // origin, and checked once more by the platform's URL parser.
    let Ok(target) = origin.url.join_untrusted(rest, query) else {
        return not_found();
    };
    // Both sides go through the same parser, which drops default ports and
    // canonicalises hosts (`127.1` is `127.0.0.1`).
    let configured = web_sys::Url::new(origin.url.origin()).map(|url| url.origin());
    match (web_sys::Url::new(&target), configured) {
        (Ok(parsed), Ok(configured)) if parsed.origin() == configured => {}
        _ => return not_found(),
    }
    let retry_after = gateway.config.retry_after_seconds.to_string();

    let admitted = edgeshed_wasm::task::RemoteWake::new(gateway.global.admit()).await;
    let global_wait = JsClock.now().saturating_duration_since(entry);
    gateway
        .metrics
        .borrow_mut()
        .global_wait
        .observe(global_wait);
    let global_permit = match admitted {
        Ok(permit) => permit,
        Err(error) => {
            return Refusal::of(&error)
                .response("global", &retry_after)
                .timing("admission", global_wait)
                .into_response()
        }
    };
    let scope = format!("origin:{}", origin.name);
    let (origin_permit, origin_wait) =
        match admit_origin(gateway, origin_index, None, &ctx, None).await {
            Ok(admitted) => admitted,
            Err(failure) => {
                let refusal = match failure {
                    Failure::Overloaded(refusal) => refusal,
                    _ => Refusal::Limit,
                };
                return refusal
                    .response(&scope, &retry_after)
                    .timing("admission", global_wait)
                    .into_response();
            }
        };

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
    let abort = AbortOnDrop::new()?;
    let started = JsClock.now();
    let sampling = super::origin_limit::start(gateway, origin_index);
    let mut limit = CallLimit::new(time_limit(None, origin.timeout));
    let fetched = fetch_within(&target, &init, &mut limit, &abort).await;
    drop(limit);
    super::origin_limit::sample_fetch(sampling, &fetched);
    let took = JsClock.now().saturating_duration_since(started);
    if let Some(histogram) = gateway
        .metrics
        .borrow_mut()
        .origin_duration
        .get_mut(origin_index)
    {
        histogram.observe(took);
    }
    let timed = |parts: ResponseParts| {
        parts
            .timing("admission", global_wait)
            .timing(&format!("{}-queue", origin.name), origin_wait)
            .timing(&origin.name, took)
    };
    let response = match fetched {
        Ok(response) => response,
        Err(Failure::Timeout | Failure::Deadline) => {
            return timed(ResponseParts::json(
                504,
                error_json("timeout", &[("origin", &origin.name)]),
            ))
            .into_response()
        }
        Err(_) => {
            return timed(ResponseParts::json(
                502,
                error_json("bad_gateway", &[("origin", &origin.name)]),
            ))
            .into_response()
        }
    };
    abort.disarm();
    let headers = forwardable(&response.headers(), &["content-length"]);
    let body = match response.body() {
        None => None,
        Some(body) => {
            HELD_BODIES.with(|held| held.set(held.get() + 1));
            let release = Closure::once_into_js(move || {
                HELD_BODIES.with(|held| held.set(held.get().saturating_sub(1)));
                drop(origin_permit);
                drop(global_permit);
            });
            // A declared length is kept unless the body was decoded on the way.
            let declared = response.headers();
            let length = match declared.get("content-encoding").ok().flatten() {
                Some(_) => None,
                None => declared
                    .get("content-length")
                    .ok()
                    .flatten()
                    .and_then(|value| value.trim().parse::<u64>().ok()),
            };
            let idle = origin
                .timeout
                .unwrap_or(crate::config::DEFAULT_ORIGIN_TIMEOUT);
            Some(pipe_held(
                &body,
                release,
                &ctx,
                length.map_or(-1.0, |n| n as f64),
                idle.as_millis() as f64,
            )?)
        }
    };
    timed(ResponseParts::stream(response.status(), body, headers)).into_response()
}
