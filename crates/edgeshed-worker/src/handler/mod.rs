//! The worker's fetch handler (compiled for wasm32 only): routes, admission,
//! fan-out, proxying, status mapping and metrics, on web-sys types.
//!
//! The JavaScript entry (`worker/index.mjs`) only instantiates the module and
//! forwards `fetch(request, env, ctx)` to [`handle`].
//!
//! The request's path: [`handle`] spawns it as a task → `route` finds the
//! route → a route kind (`fanout`, `proxy`) admits it globally
//! (`global`) → each origin call runs its origin's pipeline
//! (`origin::OriginRuntime::call`: local limit → fleet budget → sample →
//! fetch → sample) → a failure becomes its answer through the one table
//! (`crate::failure`, via `respond`).
//!
//! Module dependency order (each uses only those before it):
//! `respond`, `concurrently`, `convert` → `budget` → `origin` → `global` →
//! `gateway` (with `route`: a route's criticality, key and rate limit) →
//! `fanout`, `proxy` → `admin` → this module; `check` (the offline
//! checker's export) uses only `convert`.

mod admin;
mod budget;
mod check;
mod concurrently;
mod convert;
mod fanout;
mod gateway;
mod global;
mod host;
mod origin;
mod proxy;
mod respond;
mod route;

use crate::handler::host::{log_exception, wait_until};
use edgeshed::time::Clock;
use edgeshed_wasm::JsClock;
use gateway::Gateway;
use respond::{error_json, ResponseParts};
use route::{Admitting, RouteRuntime};
use wasm_bindgen::prelude::*;

/// Handles one request. The promise always resolves to a `Response`: every
/// failure is mapped to a status, never thrown.
#[wasm_bindgen]
pub fn handle(request: web_sys::Request, env: JsValue, ctx: JsValue) -> js_sys::Promise {
    let keep_alive = ctx.clone();
    let client_gone = request.signal();
    // Tasks of requests that workerd cancelled never finish on their own:
    // give their permits back (see `task::reclaim_expired`).
    let reclaimed = edgeshed_wasm::task::reclaim_expired();
    let lifetime = match Gateway::for_isolate(&env) {
        Ok(gateway) => {
            if reclaimed > 0 {
                let total = gateway.reclaimed_tasks.get() + reclaimed as u64;
                gateway.reclaimed_tasks.set(total);
            }
            Some(gateway.config.max_request_time().as_secs_f64() * 1000.0)
        }
        Err(_) => None,
    };
    let probe = JsValue::from(client_gone.clone());
    let spawned = edgeshed_wasm::task::spawn_for_request(
        async move {
            // With the `enable_request_signal` flag, the request's signal aborts
            // when the client disconnects: the route future is then dropped at
            // once — its permits return and its origin fetches are aborted —
            // instead of waiting for a hung origin. (Watched only once the
            // route waits: a request answered in its first poll needs none.)
            let routed =
                match edgeshed_wasm::abort::unless_aborted(route(request, env, ctx), client_gone)
                    .await
                {
                    Ok(routed) => routed,
                    Err(_) => {
                        ResponseParts::json(499, error_json("client_closed", &[])).into_response()
                    }
                };
            let response = match routed {
                Ok(response) => response,
                // An exception's text (a message, a stack, a URL in it) is
                // for the operator's log, never for the client.
                Err(error) => {
                    log_exception(
                        "edgeshed: a request failed with an exception (500 internal):",
                        &error,
                    );
                    ResponseParts::json(500, error_json("internal", &[])).into_response()?
                }
            };
            Ok(response.into())
        },
        lifetime,
        Some(probe),
    );
    // The task holds permits until it ends. If the client goes away first,
    // workerd cancels the request's pending I/O — and the task would never
    // end. Registering it with waitUntil keeps the request's context (and
    // so the task's own timers and fetches) alive until it does. A task that
    // ended in its first step (a shed request) needs none.
    if !spawned.ended {
        wait_until(&keep_alive, &spawned.promise);
    }
    spawned.promise
}

async fn route(
    request: web_sys::Request,
    env: JsValue,
    ctx: JsValue,
) -> Result<web_sys::Response, JsValue> {
    let entry = JsClock.now();
    let url = request.url();
    let (path, query) = crate::proxy_path::split_request_url(&url);
    let gateway = match Gateway::for_isolate(&env) {
        Ok(gateway) => gateway,
        // The details (origin URLs among them) are for the operator: in the
        // log, and on the admin endpoints the configuration opened.
        Err(error) if path.starts_with("/__edgeshed/") => {
            return admin::misconfigured(&error, &request);
        }
        Err(_) => {
            let body = crate::check::PUBLIC_MISCONFIGURED.to_string();
            return ResponseParts::json(500, body).into_response();
        }
    };
    if path.starts_with("/__edgeshed/") {
        return admin::respond(&gateway, &request, path).await;
    }
    let not_found = || {
        ResponseParts::json(404, error_json("not_found", &[]))
            .timing("admission", core::time::Duration::ZERO)
            .into_response()
    };
    let Some((index, found)) = gateway.config.route_at(path) else {
        return not_found();
    };
    let Some(runtime) = gateway.routes.get(index) else {
        return not_found();
    };
    let classified = RouteRuntime::classify(found, &request);
    let admitting = Admitting {
        call: &classified.call,
        route: found.key(),
    };
    // The route's rate limit comes first: a request over it costs no limit a slot.
    let headers = match runtime.check(&classified).await {
        Ok(headers) => headers,
        Err((limited, headers)) => {
            let failure = crate::failure::Failure::RateLimited(limited);
            let retry_after = gateway.config.retry_after_seconds;
            let scope = crate::failure::Scope::Route(found.key());
            let response = ResponseParts::failure(failure, scope, found.key(), retry_after)
                .timing("admission", core::time::Duration::ZERO)
                .into_response()?;
            route::add_headers(&response, &headers);
            return Ok(response);
        }
    };
    let response = match found {
        crate::config::Route::FanOut {
            deadline, calls, ..
        } => {
            let deadline = deadline.map(|budget| entry + budget);
            fanout::respond(
                &gateway,
                &request,
                (entry, deadline),
                calls,
                admitting,
                &ctx,
            )
            .await
        }
        crate::config::Route::Proxy { prefix, origin, .. } => {
            let rest = path.get(prefix.len()..).unwrap_or_default().to_string();
            let query = query.map(str::to_string);
            proxy::respond(
                &gateway,
                (&request, &ctx),
                (entry, admitting),
                *origin,
                (&rest, query.as_deref()),
            )
            .await
        }
    }?;
    route::add_passed_headers(&response, &headers);
    Ok(response)
}
