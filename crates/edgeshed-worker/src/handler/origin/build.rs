//! Building every origin's runtime from the configuration and `env`: its
//! limiter, its adaptive controller and its fleet budget.

use super::runtime::OriginRuntime;
use crate::config::{Config, ConfigError};
use crate::metrics::Histogram;
use core::cell::RefCell;
use edgeshed::admission::Admission;
use edgeshed::limit::adaptive::{AnyLimit, Controller};
use edgeshed_wasm::JsClock;
use wasm_bindgen::JsValue;

/// One runtime per origin, in `config.origins` order. Errors name the key:
/// the limiters' first (the configuration refuses what the core refuses, so
/// none is expected), then the adaptive algorithms', then every budget
/// binding missing from `env` at once.
pub(crate) fn runtimes(env: &JsValue, config: &Config) -> Result<Vec<OriginRuntime>, ConfigError> {
    let admissions = config
        .origins
        .iter()
        .map(|origin| {
            let limit = &origin.limit;
            let options = config.options(limit);
            Admission::with_options(limit.max_in_flight, limit.policy(), options, JsClock)
                .map_err(|error| ConfigError::new(format!("origins.{}: {error}", origin.name)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let controllers = controllers(config, &admissions)?;
    let budgets = crate::handler::budget::budgets(env, config)?;
    Ok(config
        .origins
        .iter()
        .zip(admissions)
        .zip(controllers)
        .zip(budgets)
        .map(
            |(((origin, admission), controller), budget)| OriginRuntime {
                config: origin.clone(),
                admission,
                controller,
                budget,
                wait: RefCell::new(Histogram::default()),
                duration: RefCell::new(Histogram::default()),
            },
        )
        .collect())
}

/// The controllers of `config`'s adaptive origins, driving the semaphores
/// of `admissions` (one per origin, in order); `None` for fixed origins.
fn controllers(
    config: &Config,
    admissions: &[Admission<JsClock>],
) -> Result<Vec<Option<Controller<AnyLimit>>>, ConfigError> {
    config
        .origins
        .iter()
        .zip(admissions)
        .map(|(origin, admission)| {
            let Some(adaptive) = &origin.adaptive else {
                return Ok(None);
            };
            let algorithm = adaptive.build().map_err(|error| {
                ConfigError::new(format!("origins.{}.adaptive: {error}", origin.name))
            })?;
            Ok(Some(Controller::new(
                algorithm,
                admission.semaphore().clone(),
            )))
        })
        .collect()
}
