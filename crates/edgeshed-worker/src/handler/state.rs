//! The isolate's gateway: configuration and limiters, created on the first
//! request and shared by every request the isolate handles.

use super::convert::read_config;
use crate::config::{Config, ConfigError};
use crate::metrics::{BudgetStats, Histogram, ScopeMetrics};
use core::cell::RefCell;
use edgeshed::admission::Admission;
use edgeshed::limit::adaptive::{AnyLimit, Controller};
use edgeshed_wasm::JsClock;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/handler/glue.js")]
extern "C" {
    /// `console.error(message)`; never throws.
    #[wasm_bindgen(js_name = logError)]
    fn log_error(message: &str);
}

/// Configuration, limiters and metrics of this isolate.
pub(crate) struct Gateway {
    pub(crate) config: Config,
    pub(crate) global: Admission<JsClock>,
    /// One limiter per origin, in `config.origins` order.
    pub(crate) origins: Vec<Admission<JsClock>>,
    /// Per origin: the controller of its adaptive limit (`None`: fixed).
    pub(crate) controllers: Vec<Option<Controller<AnyLimit>>>,
    /// The fleet budget of each origin, in `config.origins` order.
    pub(crate) budgets: Vec<Option<Rc<super::budget::OriginBudget>>>,
    pub(crate) metrics: RefCell<Metrics>,
}

/// Histograms of the isolate.
#[derive(Default)]
pub(crate) struct Metrics {
    pub(crate) global_wait: Histogram,
    pub(crate) origin_wait: Vec<Histogram>,
    pub(crate) origin_duration: Vec<Histogram>,
    /// Tasks of cancelled requests whose permits were reclaimed.
    pub(crate) reclaimed_tasks: u64,
}

thread_local! {
    /// `None` until the first request; then the gateway or why it is invalid.
    static GATEWAY: RefCell<Option<Result<Rc<Gateway>, ConfigError>>> = const { RefCell::new(None) };
}

impl Gateway {
    /// The isolate's gateway, built from `env.EDGESHED` on first use. An
    /// invalid configuration is remembered too: every request answers 500,
    /// and the error is logged once (`wrangler dev` / `wrangler tail`).
    pub(crate) fn for_isolate(env: &JsValue) -> Result<Rc<Gateway>, ConfigError> {
        if let Some(known) = GATEWAY.with(|cell| cell.borrow().clone()) {
            return known;
        }
        // Built outside the borrow: nothing that runs while the cell is
        // borrowed can leave it borrowed for the next request.
        let built = Gateway::from_env(env).map(Rc::new);
        if let Err(error) = &built {
            log_error(&format!(
                "edgeshed: configuration error, every request answers 500 until it is fixed: {error}"
            ));
        }
        GATEWAY.with(|cell| *cell.borrow_mut() = Some(built.clone()));
        built
    }

    fn from_env(env: &JsValue) -> Result<Gateway, ConfigError> {
        let config = read_config(env)?;
        // The configuration refuses what the core refuses (a zero limit or
        // queue timeout); a refusal here still fails closed, naming the scope.
        let global = Admission::new(config.global.max_in_flight, config.global.policy(), JsClock)
            .map_err(|error| ConfigError::new(format!("global: {error}")))?;
        let origins = config
            .origins
            .iter()
            .map(|origin| {
                Admission::new(origin.limit.max_in_flight, origin.limit.policy(), JsClock)
                    .map_err(|error| ConfigError::new(format!("origins.{}: {error}", origin.name)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let controllers = super::origin_limit::controllers(&config, &origins)?;
        let budgets = super::budget::budgets(env, &config)?;
        let metrics = Metrics {
            global_wait: Histogram::default(),
            origin_wait: vec![Histogram::default(); origins.len()],
            origin_duration: vec![Histogram::default(); origins.len()],
            reclaimed_tasks: 0,
        };
        Ok(Gateway {
            config,
            global,
            origins,
            controllers,
            budgets,
            metrics: RefCell::new(metrics),
        })
    }

    /// Every scope's stats and histograms, global first.
    pub(crate) fn with_scopes<T>(&self, render: impl FnOnce(&[ScopeMetrics<'_>]) -> T) -> T {
        let metrics = self.metrics.borrow();
        let names: Vec<String> = self
            .config
            .origins
            .iter()
            .map(|origin| format!("origin:{}", origin.name))
            .collect();
        let mut scopes = vec![ScopeMetrics {
            scope: "global",
            stats: self.global.stats(),
            admission_wait: &metrics.global_wait,
            origin_duration: None,
            budget: None,
        }];
        for (index, admission) in self.origins.iter().enumerate() {
            if let (Some(name), Some(wait)) = (names.get(index), metrics.origin_wait.get(index)) {
                let mut stats = admission.stats();
                let budget = self.budgets.get(index).and_then(Option::as_ref);
                if let Some(budget) = budget {
                    // the effective limit: what this isolate may use of the
                    // budget, at most its local limit
                    stats.limit = stats.limit.min(budget.usable() as usize);
                }
                scopes.push(ScopeMetrics {
                    scope: name,
                    stats,
                    admission_wait: wait,
                    origin_duration: metrics.origin_duration.get(index),
                    budget: budget.map(|budget| BudgetStats {
                        leased: budget.leased(),
                        shed: budget.counters.get().shed,
                    }),
                });
            }
        }
        render(&scopes)
    }
}
