//! `/__edgeshed/stats` and `/__edgeshed/metrics`: outside the global limit,
//! and closed unless the configuration opens them: 404 without `statsToken`
//! or `"statsPublic": true`, 401 without the right bearer token. While the
//! configuration is invalid they show its errors instead, to the same readers.

mod budget;

use super::gateway::Gateway;
use super::respond::{error_json, ResponseParts};
use crate::check::{misconfigured_details, PUBLIC_MISCONFIGURED};
use crate::config::{Admin, ConfigError};
use crate::metrics::{render_prometheus, render_stats_json, Exposition, IsolateMetrics};
use wasm_bindgen::JsValue;

/// Compares in time independent of where the strings differ.
fn same_secret(given: &str, expected: &str) -> bool {
    let (given, expected) = (given.as_bytes(), expected.as_bytes());
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
}

/// Whether `request` may read the admin endpoints under `admin`.
enum Access {
    /// `statsPublic`, or the bearer of the `statsToken`.
    Allowed,
    /// Neither `statsToken` nor `statsPublic`.
    Closed,
    /// A `statsToken`, and not its bearer.
    Unauthorized,
}

/// The access `request` has (its `Authorization` compared in constant time).
fn access(admin: &Admin, request: &web_sys::Request) -> Result<Access, JsValue> {
    Ok(match admin {
        Admin::Closed => Access::Closed,
        Admin::Public => Access::Allowed,
        Admin::Bearer(token) => {
            let given = request.headers().get("authorization")?.unwrap_or_default();
            let authorized = given
                .strip_prefix("Bearer ")
                .is_some_and(|given| same_secret(given.trim(), token));
            if authorized {
                Access::Allowed
            } else {
                Access::Unauthorized
            }
        }
    })
}

/// 401 with the challenge.
fn unauthorized() -> Result<web_sys::Response, JsValue> {
    ResponseParts::json(401, error_json("unauthorized", &[]))
        .header("www-authenticate", "Bearer realm=\"edgeshed\"")
        .into_response()
}

/// Answers `/__edgeshed/*` while the configuration is invalid: 500 with
/// every error to a reader the configuration's own (valid) `statsToken` or
/// `statsPublic` lets in, 401 to a wrong bearer, and otherwise the public
/// 500 that says only that the gateway is misconfigured.
pub(crate) fn misconfigured(
    error: &ConfigError,
    request: &web_sys::Request,
) -> Result<web_sys::Response, JsValue> {
    let body = match access(error.admin(), request)? {
        Access::Unauthorized => return unauthorized(),
        Access::Closed => PUBLIC_MISCONFIGURED.to_string(),
        Access::Allowed => misconfigured_details(error),
    };
    ResponseParts::json(500, body)
        .header("cache-control", "no-store")
        .into_response()
}

/// Answers `/__edgeshed/<path>` once the request may see it.
pub(crate) async fn respond(
    gateway: &Gateway,
    request: &web_sys::Request,
    path: &str,
) -> Result<web_sys::Response, JsValue> {
    match access(&gateway.config.admin, request)? {
        // Closed: indistinguishable from a path no route matches.
        Access::Closed => {
            return ResponseParts::json(404, error_json("not_found", &[]))
                .timing("admission", core::time::Duration::ZERO)
                .into_response()
        }
        Access::Unauthorized => return unauthorized(),
        Access::Allowed => {}
    }
    match path {
        "/__edgeshed/stats" => {
            let body = gateway.with_scopes(render_stats_json);
            ResponseParts::json(200, body)
                .header("cache-control", "no-store")
                .into_response()
        }
        "/__edgeshed/metrics" => {
            let budgets = budget::metrics(gateway);
            let isolate = IsolateMetrics {
                reclaimed_tasks: gateway.reclaimed_tasks.get(),
                live_tasks: edgeshed_wasm::task::live_tasks() as u64,
                lost_tasks: edgeshed_wasm::task::lost_tasks(),
                foreign_steps: edgeshed_wasm::task::foreign_steps(),
                held_bodies: crate::handler::proxy::held_bodies() as u64,
            };
            let body = gateway.with_scopes(|scopes, routes| {
                render_prometheus(&Exposition {
                    scopes,
                    routes,
                    budgets: &budgets,
                    isolate,
                })
            });
            ResponseParts::text(200, "text/plain; version=0.0.4; charset=utf-8", body)
                .header("cache-control", "no-store")
                .into_response()
        }
        "/__edgeshed/budget" => budget::fleet(gateway).await,
        _ => ResponseParts::json(404, error_json("not_found", &[])).into_response(),
    }
}
