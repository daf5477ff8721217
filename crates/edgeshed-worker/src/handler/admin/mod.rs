//! `/__edgeshed/stats` and `/__edgeshed/metrics`: outside the global limit,
//! and closed unless the configuration opens them: 404 without `statsToken`
//! or `"statsPublic": true`, 401 without the right bearer token.

mod budget;

use super::gateway::Gateway;
use super::respond::{error_json, ResponseParts};
use crate::config::Admin;
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

/// Answers `/__edgeshed/<path>` once the request may see it.
pub(crate) async fn respond(
    gateway: &Gateway,
    request: &web_sys::Request,
    path: &str,
) -> Result<web_sys::Response, JsValue> {
    match &gateway.config.admin {
        // Closed: indistinguishable from a path no route matches.
        Admin::Closed => {
            return ResponseParts::json(404, error_json("not_found", &[]))
                .timing("admission", core::time::Duration::ZERO)
                .into_response()
        }
        Admin::Public => {}
        Admin::Bearer(token) => {
            let given = request.headers().get("authorization")?.unwrap_or_default();
            let authorized = given
                .strip_prefix("Bearer ")
                .is_some_and(|given| same_secret(given.trim(), token));
            if !authorized {
                return ResponseParts::json(401, error_json("unauthorized", &[]))
                    .header("www-authenticate", "Bearer realm=\"edgeshed\"")
                    .into_response();
            }
        }
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
