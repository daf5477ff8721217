//! What a valid configuration accepts but does not do as it reads
//! ([`Warning`]), and the `env` bindings it needs ([`NamedBinding`]):
//! `edgeshed check` prints both (`scripts/check-config.mjs`), the worker
//! logs the lease warning when it builds a budget.

use super::{Config, Limit, Origin, RateLimit, Route};
use edgeshed::admission::{Criticality, Reserve};
use serde::Serialize;
use std::fmt;

/// A setting that is valid but does less than it seems to, at `path`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// The key it is about (`routes[2].fairness`, `origins.api`).
    pub path: String,
    /// What it does instead, read after the path.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.path, self.message)
    }
}

/// An `env` binding the configuration names, which wrangler.toml must declare.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NamedBinding {
    /// The key that names it (`origins.users.budget.binding`, or the
    /// budget for the default binding).
    pub path: String,
    /// The binding's name in `env`.
    pub name: String,
    /// What it must be.
    pub kind: BindingKind,
}

/// What kind of binding a [`NamedBinding`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BindingKind {
    /// A Durable Object namespace of the `EdgeshedBudget` class
    /// (`[[durable_objects.bindings]]`).
    DurableObject,
    /// A Rate Limiting binding (`[[ratelimits]]`).
    RateLimit,
}

impl Config {
    /// Every warning, in configuration order: a route's `fairness` at a
    /// limit without a queue (where it cannot act), the default reserve that a
    /// route's `criticality` puts on every limit without a `reserve` of its
    /// own (with the ceilings it leaves), and a budget lease shorter than
    /// twice its origin's time limit.
    pub fn warnings(&self) -> Vec<Warning> {
        let mut warnings: Vec<Warning> = self
            .routes
            .iter()
            .enumerate()
            .flat_map(|(index, route)| self.idle_fairness(index, route))
            .collect();
        if let Some(index) = self
            .routes
            .iter()
            .position(|route| route.admission().criticality.is_some())
        {
            let cause = format!("routes[{index}].criticality");
            let limits = core::iter::once(("global".to_string(), &self.global, false)).chain(
                self.origins.iter().map(|origin| {
                    let path = format!("origins.{}", origin.name);
                    (path, &origin.limit, origin.adaptive.is_some())
                }),
            );
            for (path, limit, adaptive) in limits {
                warnings.extend(default_reserve(path, limit, adaptive, &cause));
            }
        }
        warnings.extend(self.origins.iter().filter_map(lease_warning));
        warnings
    }

    /// Every `env` binding the configuration names: each budget's Durable
    /// Object namespace and each route's Rate Limiting binding.
    pub fn bindings(&self) -> Vec<NamedBinding> {
        let budgets = self.origins.iter().filter_map(|origin| {
            let budget = origin.budget.as_ref()?;
            Some(NamedBinding {
                path: format!("origins.{}.budget.binding", origin.name),
                name: budget.binding.clone(),
                kind: BindingKind::DurableObject,
            })
        });
        let rates = self.routes.iter().enumerate().filter_map(|(index, route)| {
            match &route.admission().rate_limit {
                Some(RateLimit::Binding { binding, .. }) => Some(NamedBinding {
                    path: format!("routes[{index}].rateLimit.binding"),
                    name: binding.clone(),
                    kind: BindingKind::RateLimit,
                }),
                _ => None,
            }
        });
        budgets.chain(rates).collect()
    }

    /// The route's `fairness` where it cannot act: a fair share only
    /// refuses a key while other keys wait, so not at a limit without a
    /// queue. One warning when no limit the route passes queues; else one
    /// per origin of the route without a queue (the global limit, a
    /// backstop that queues by default only when configured to, is named
    /// only in the first case).
    fn idle_fairness(&self, index: usize, route: &Route) -> Vec<Warning> {
        if route.admission().fairness.is_none() {
            return Vec::new();
        }
        let mut origins: Vec<usize> = Vec::new();
        let named: Vec<usize> = match route {
            Route::FanOut { calls, .. } => calls.iter().map(|call| call.origin).collect(),
            Route::Proxy { origin, .. } => vec![*origin],
        };
        for at in named {
            if !origins.contains(&at) {
                origins.push(at);
            }
        }
        let named = origins.iter().filter_map(|&at| self.origins.get(at));
        let origins: Vec<(String, &Limit)> = named
            .map(|origin| (format!("origins.{}", origin.name), &origin.limit))
            .collect();
        let path = format!("routes[{index}].fairness");
        let queueing: Vec<&str> = core::iter::once(("global", &self.global))
            .chain(origins.iter().map(|(name, limit)| (name.as_str(), *limit)))
            .filter(|(_, limit)| limit.max_queue > 0)
            .map(|(name, _)| name)
            .collect();
        if queueing.is_empty() {
            let names: Vec<&str> = core::iter::once("global")
                .chain(origins.iter().map(|(name, _)| name.as_str()))
                .collect();
            let to_queue = names.last().copied().unwrap_or("global");
            return vec![Warning {
                path,
                message: format!(
                    "has no effect: no limit this route passes ({}) has a queue (maxQueue 0), \
                     and a fair share only refuses a key while other keys wait in one; give \
                     {to_queue} a maxQueue and queueTimeoutMs",
                    names.join(", ")
                ),
            }];
        }
        origins
            .iter()
            .filter(|(_, limit)| limit.max_queue == 0)
            .map(|(name, _)| Warning {
                path: path.clone(),
                message: format!(
                    "does nothing at {name}: its maxQueue is 0, and a fair share only refuses a \
                     key while other keys wait in the limit's queue (it acts at {})",
                    queueing.join(", ")
                ),
            })
            .collect()
    }
}

/// The default reserve on `limit` (at `path`), if it has no `reserve` of its
/// own and the reserve lowers a ceiling; `cause` is the key that names a
/// criticality.
fn default_reserve(path: String, limit: &Limit, adaptive: bool, cause: &str) -> Option<Warning> {
    if limit.reserve.is_some() {
        return None;
    }
    let reserve = Reserve::default();
    let n = limit.max_in_flight;
    let default = reserve.ceiling(n, Criticality::Default);
    let sheddable = reserve.ceiling(n, Criticality::Sheddable);
    if !adaptive && default == n && sheddable == n {
        return None;
    }
    let of = if adaptive {
        format!("its adaptive limit (at its initialLimit {n})")
    } else {
        format!("maxInFlight {n}")
    };
    Some(Warning {
        path,
        message: format!(
            "keeps the default reserve (critical 0.1, default 0.2 of the limit), because \
             {cause} names a criticality: of {of}, default calls may hold {default} and \
             sheddable calls {sheddable} while a more critical call holds a permit or waits \
             (after a quiet spell the reserve is lent to them); set its \"reserve\" to choose, \
             {{\"critical\": 0, \"default\": 0}} keeps none"
        ),
    })
}

/// `origins.<name>.budget.leaseTtlMs` under twice the origin's `timeoutMs`:
/// an isolate admits no call that could outlive its lease, and only calls
/// of up to half the TTL are sure to end before a dead isolate's permits
/// are granted again. The worker logs it when it builds the budget.
pub fn lease_warning(origin: &Origin) -> Option<Warning> {
    let budget = origin.budget.as_ref()?;
    let timeout_ms = origin.timeout.map_or(0, |t| t.as_millis() as u64);
    (budget.lease_ttl_ms < 2 * timeout_ms).then(|| Warning {
        path: format!("origins.{}.budget.leaseTtlMs", origin.name),
        message: format!(
            "({}) should be at least twice origins.{}.timeoutMs ({timeout_ms}): an isolate \
             admits no call that could outlive its lease, and only calls of up to half the TTL \
             are sure to end before the permits of an isolate that died are granted again",
            budget.lease_ttl_ms, origin.name
        ),
    })
}
