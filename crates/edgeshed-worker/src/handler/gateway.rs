//! The isolate's gateway: configuration, the global admission and one
//! runtime per origin, created on the first request and shared by every
//! request the isolate handles.

use super::convert::read_config;
use super::global::Global;
use super::origin::OriginRuntime;
use super::route::RouteRuntime;
use crate::config::{Config, ConfigError};
use crate::handler::host::log_error;
use crate::metrics::{ceilings, Histogram, RouteMetrics, ScopeMetrics};
use core::cell::{Cell, Ref, RefCell};
use edgeshed::admission::Admission;
use edgeshed_wasm::JsClock;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// Configuration, limiters and metrics of this isolate.
pub(crate) struct Gateway {
    pub(crate) config: Config,
    pub(crate) global: Global,
    /// One runtime per origin, in `config.origins` order (a route's origin
    /// index is an index here).
    pub(crate) origins: Vec<OriginRuntime>,
    /// One runtime per route (its rate limit), in `config.routes` order.
    pub(crate) routes: Vec<RouteRuntime>,
    /// Tasks of cancelled requests whose permits were reclaimed.
    pub(crate) reclaimed_tasks: Cell<u64>,
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
        // What only `env` can refuse (a binding it lacks) is readable on the
        // admin endpoints the valid configuration opened.
        let runtimes = Self::runtimes(env, &config);
        let (global, origins, routes) =
            runtimes.map_err(|error| error.with_admin(config.admin.clone()))?;
        Ok(Gateway {
            config,
            global,
            origins,
            routes,
            reclaimed_tasks: Cell::new(0),
        })
    }

    /// The global limiter and the runtimes of `config`'s origins and routes.
    fn runtimes(
        env: &JsValue,
        config: &Config,
    ) -> Result<(Global, Vec<OriginRuntime>, Vec<RouteRuntime>), ConfigError> {
        // The configuration refuses what the core refuses (a zero limit or
        // queue timeout); a refusal here still fails closed, naming the scope.
        let limit = &config.global;
        let options = config.options(limit);
        let global = Admission::with_options(limit.max_in_flight, limit.policy(), options, JsClock)
            .map_err(|error| ConfigError::new(format!("global: {error}")))?;
        let origins = super::origin::runtimes(env, config)?;
        let routes = super::route::runtimes(env, config)?;
        Ok((Global::new(global), origins, routes))
    }

    /// The origin at `index` (a route's origin), if any.
    pub(crate) fn origin(&self, index: usize) -> Option<&OriginRuntime> {
        self.origins.get(index)
    }

    /// Every scope's stats and histograms, global first, and every
    /// rate-limited route's numbers.
    pub(crate) fn with_scopes<T>(
        &self,
        render: impl FnOnce(&[ScopeMetrics<'_>], &[RouteMetrics<'_>]) -> T,
    ) -> T {
        let global_wait = self.global.wait.borrow();
        let names: Vec<String> = self
            .origins
            .iter()
            .map(|origin| format!("origin:{}", origin.config.name))
            .collect();
        let histograms: Vec<(Ref<'_, Histogram>, Ref<'_, Histogram>)> = self
            .origins
            .iter()
            .map(|origin| (origin.wait.borrow(), origin.duration.borrow()))
            .collect();
        let global = &self.global.admission;
        let (stats, reserve) = (global.stats(), global.reserve());
        let mut scopes = vec![ScopeMetrics {
            scope: "global",
            stats,
            admission_wait: &global_wait,
            origin_duration: None,
            budget: None,
            top_refused: global.top_refused_keys(),
            reserve,
            ceilings: ceilings(reserve, stats.limit, stats.limit),
        }];
        for ((origin, name), (wait, duration)) in self.origins.iter().zip(&names).zip(&histograms) {
            let (stats, reserve, ceilings) = origin.stats();
            scopes.push(ScopeMetrics {
                scope: name,
                stats,
                admission_wait: wait,
                origin_duration: Some(duration),
                budget: origin.budget_stats(),
                top_refused: origin.top_refused_keys(),
                reserve,
                ceilings,
            });
        }
        let routes: Vec<RouteMetrics<'_>> = self
            .routes
            .iter()
            .zip(&self.config.routes)
            .filter_map(|(runtime, route)| runtime.metrics(route))
            .collect();
        render(&scopes, &routes)
    }
}
