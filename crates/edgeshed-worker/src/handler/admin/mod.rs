//! `/__edgeshed/stats` and `/__edgeshed/metrics`: outside the global limit,
//! and closed unless the configuration opens them: 404 without `statsToken`
//! or `"statsPublic": true`, 401 without the right bearer token.

mod budget;

use super::gateway::Gateway;
use super::respond::{error_json, ResponseParts};
use crate::config::Admin;
use crate::metrics::{render_prometheus, render_stats_json};
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
            let mut body = gateway.with_scopes(render_prometheus);
            let reclaimed = gateway.reclaimed_tasks.get();
            body.push_str(&format!(
                "# HELP edgeshed_reclaimed_tasks_total Requests cancelled by the runtime whose permits were reclaimed.\n\
                 # TYPE edgeshed_reclaimed_tasks_total counter\n\
                 edgeshed_reclaimed_tasks_total {reclaimed}\n\
                 # HELP edgeshed_live_tasks Requests of this isolate still running.\n\
                 # TYPE edgeshed_live_tasks gauge\n\
                 edgeshed_live_tasks {}\n\
                 # HELP edgeshed_lost_tasks_total Requests failed because an exception unwound through their step.\n\
                 # TYPE edgeshed_lost_tasks_total counter\n\
                 edgeshed_lost_tasks_total {}\n\
                 # HELP edgeshed_foreign_steps_total Task steps delivered in another request's turn, skipped.\n\
                 # TYPE edgeshed_foreign_steps_total counter\n\
                 edgeshed_foreign_steps_total {}\n\
                 # HELP edgeshed_held_bodies Proxied bodies still holding their permits.\n\
                 # TYPE edgeshed_held_bodies gauge\n\
                 edgeshed_held_bodies {}\n",
                edgeshed_wasm::task::live_tasks(),
                edgeshed_wasm::task::lost_tasks(),
                edgeshed_wasm::task::foreign_steps(),
                crate::handler::proxy::held_bodies(),
            ));
            budget::render_metrics(gateway, &mut body);
            ResponseParts::text(200, "text/plain; version=0.0.4; charset=utf-8", body)
                .header("cache-control", "no-store")
                .into_response()
        }
        "/__edgeshed/budget" => budget::fleet(gateway).await,
        _ => ResponseParts::json(404, error_json("not_found", &[])).into_response(),
    }
}
