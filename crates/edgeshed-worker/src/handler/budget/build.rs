//! Building every origin's fleet budget from the configuration and `env`.

use super::state::OriginBudget;
use crate::budget::HolderConfig;
use crate::config::{Config, ConfigError};
use crate::handler::host::{log_warning, namespace_of, version_of};
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// Every origin's budget, in `config.origins` order (`None`: no budget).
/// A budget whose binding is not a namespace in `env` is a configuration
/// error naming `origins.<name>.budget.binding`.
pub(crate) fn budgets(
    env: &JsValue,
    config: &Config,
) -> Result<Vec<Option<Rc<OriginBudget>>>, ConfigError> {
    let mut errors = Vec::new();
    let mut budgets = Vec::new();
    // One version for the isolate: the configuration comes with it.
    let version = version_of(env);
    for origin in &config.origins {
        let Some(budget) = &origin.budget else {
            budgets.push(None);
            continue;
        };
        let namespace = namespace_of(env, &budget.binding);
        if namespace.is_undefined() {
            errors.push(format!(
                "origins.{}.budget.binding: env has no Durable Object namespace \"{}\" (declare it in \
                 wrangler.toml [[durable_objects.bindings]] with class_name = \"EdgeshedBudget\")",
                origin.name, budget.binding
            ));
            continue;
        }
        let timeout_ms = origin.timeout.map_or(0, |t| t.as_millis() as u64);
        if let Some(warning) = crate::config::lease_warning(origin) {
            log_warning(&format!("edgeshed: {warning}"));
        }
        // The most this isolate may ever ask for: its fixed limit, or the
        // adaptive limit's maximum (the local limiter, admitted first, keeps
        // the demand within the current adaptive limit).
        let local_max = origin
            .adaptive
            .as_ref()
            .map_or(origin.limit.max_in_flight, |adaptive| adaptive.bounds.max());
        let local_limit = u32::try_from(local_max).unwrap_or(u32::MAX);
        let holder = HolderConfig::new(local_limit, budget.lease_ttl_ms, budget.unavailable)
            .calls_last(timeout_ms, budget.lease_ttl_ms);
        budgets.push(Some(Rc::new(OriginBudget::new(
            (origin.name.clone(), namespace),
            budget.clone(),
            holder,
            &version,
        ))));
    }
    if errors.is_empty() {
        Ok(budgets)
    } else {
        Err(ConfigError::all(errors))
    }
}
