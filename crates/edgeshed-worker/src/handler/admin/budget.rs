//! `GET /__edgeshed/budget` (the fleet view, asked from the objects) and the
//! budget's numbers for `/__edgeshed/metrics`.

use crate::handler::gateway::Gateway;
use crate::handler::host::fleet_views;
use crate::handler::respond::ResponseParts;
use crate::metrics::BudgetMetrics;
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

/// Each budgeted origin's lease calls and permits, for the metrics.
pub(crate) fn metrics(gateway: &Gateway) -> Vec<BudgetMetrics<'_>> {
    gateway
        .origins
        .iter()
        .filter_map(|o| o.budget.as_ref())
        .map(|budget| {
            let counters = budget.counters.get();
            BudgetMetrics {
                origin: &budget.name,
                calls: counters.calls,
                watches: counters.watches,
                failures: counters.failures,
                overloaded: counters.overloaded,
                fallbacks: counters.fallbacks,
                shed: counters.shed,
                leased: budget.leased(),
            }
        })
        .collect()
}
