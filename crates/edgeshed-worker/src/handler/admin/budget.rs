//! `GET /__edgeshed/budget` (the fleet view, asked from the objects) and the
//! budget's lines of `/__edgeshed/metrics`.

use crate::handler::gateway::Gateway;
use crate::handler::host::fleet_views;
use crate::handler::respond::ResponseParts;
use core::fmt::Write;
use edgeshed::time::Clock;
use edgeshed_wasm::settled::Settled;
use edgeshed_wasm::JsClock;
use futures_util::future::{select, Either};
use wasm_bindgen::prelude::*;

/// How long the fleet view waits for the objects.
const VIEW_TIMEOUT_MS: f64 = 2_000.0;

/// `{"origins": {"<name>": {"limit", "leased", "holders", "learning"}}}`.
pub(crate) async fn fleet(gateway: &Gateway) -> Result<web_sys::Response, JsValue> {
    let entries = js_sys::Array::new();
    for budget in gateway.origins.iter().filter_map(|o| o.budget.as_ref()) {
        let entry = js_sys::Array::new();
        entry.push(&JsValue::from_str(&budget.name));
        entry.push(&budget.namespace);
        entry.push(&JsValue::from(budget.config.max_in_flight));
        entry.push(&JsValue::from(budget.config.lease_ttl_ms as f64));
        entry.push(&budget.adaptive_js());
        entries.push(&entry);
    }
    let views = Settled::new(fleet_views(&entries, VIEW_TIMEOUT_MS));
    // The glue's own timer settles it; this one only bounds the wait.
    let wait = core::time::Duration::from_millis(VIEW_TIMEOUT_MS as u64 + 500);
    let timer = JsClock.sleep_until(JsClock.now() + wait);
    let views = match select(views, core::pin::pin!(timer)).await {
        Either::Left((Ok(views), _)) => views,
        _ => js_sys::Object::new().into(),
    };
    let body = js_sys::JSON::stringify(&views)?
        .as_string()
        .unwrap_or_default();
    ResponseParts::json(200, body)
        .header("cache-control", "no-store")
        .into_response()
}

/// Appends the budget's counters and leased permits, per budgeted origin.
pub(crate) fn render_metrics(gateway: &Gateway, out: &mut String) {
    let budgets: Vec<_> = gateway
        .origins
        .iter()
        .filter_map(|o| o.budget.as_ref())
        .collect();
    if budgets.is_empty() {
        return;
    }
    type Family = (&'static str, &'static str, &'static str);
    let families: [Family; 7] = [
        (
            "edgeshed_budget_calls_total",
            "counter",
            "Lease calls to the fleet budget's object.",
        ),
        (
            "edgeshed_budget_watches_total",
            "counter",
            "Watches opened at the fleet budget's object (calls it keeps until others need permits).",
        ),
        (
            "edgeshed_budget_lease_failures_total",
            "counter",
            "Lease calls to the fleet budget's object that failed or timed out.",
        ),
        (
            "edgeshed_budget_overloaded_total",
            "counter",
            "Calls to the fleet budget's object answered with an overloaded error (never retried).",
        ),
        (
            "edgeshed_budget_fallbacks_total",
            "counter",
            "Requests decided by the budget's unavailable fallback (local limit, or shed): budgetUnavailable in the stats.",
        ),
        (
            "edgeshed_budget_shed_total",
            "counter",
            "Requests refused because the fleet had no permit for them while they could wait (503, reason budget).",
        ),
        (
            "edgeshed_budget_leased",
            "gauge",
            "Permits this isolate holds under its lease.",
        ),
    ];
    for (index, (name, kind, help)) in families.iter().enumerate() {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        for budget in &budgets {
            let counters = budget.counters.get();
            let value = match index {
                0 => counters.calls,
                1 => counters.watches,
                2 => counters.failures,
                3 => counters.overloaded,
                4 => counters.fallbacks,
                5 => counters.shed,
                _ => u64::from(budget.leased()),
            };
            let _ = writeln!(out, "{name}{{origin=\"{}\"}} {value}", budget.name);
        }
    }
}
