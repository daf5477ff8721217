//! The fleet budget in the isolate: one [`OriginBudget`] per budgeted
//! origin drives a [`LeaseHolder`] against the origin's `EdgeshedBudget`
//! Durable Object, and gates admissions after the origin's local limiter
//! (`budget_admit.rs`).
//!
//! - A call is admitted when the holder's effective limit allows it
//!   (min(local limit, permits leased), or the `unavailable` fallback).
//! - Otherwise the request waits, at most the holder's patience (TTL / 10)
//!   and never past its deadline or the origin's `timeoutMs`, while the
//!   holder asks for what it needs; the object keeps that ask and answers it
//!   as soon as permits come back. A request still without a permit then is
//!   refused: 503 with `"reason":"budget"`, counted in `budgetShed`.
//! - The holder's calls (asks, renewals, give-backs, its watch) are started
//!   by admissions, completions, answers and a timer at the holder's next
//!   due time ([`LeaseHolder::next_poll_at`]; see `budget_calls.rs`). Each
//!   runs under `ctx.waitUntil` and reports back through a callback.

use super::budget_calls::now_ms;
use crate::budget::{HolderConfig, LeaseHolder};
use crate::config::{Budget, Config, ConfigError};
use core::cell::{Cell, RefCell};
use core::task::Waker;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/handler/budget_glue.js")]
extern "C" {
    /// `env[name]` if it is a Durable Object namespace, else `undefined`.
    #[wasm_bindgen(js_name = namespaceOf)]
    fn namespace_of(env: &JsValue, name: &str) -> JsValue;
    /// `console.warn(message)`; never throws.
    #[wasm_bindgen(js_name = logWarning)]
    fn log_warning(message: &str);
}

/// Counters of one budgeted origin in this isolate.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BudgetCounters {
    /// Calls to the object started.
    pub(crate) calls: u64,
    /// Calls that failed (threw, rejected, timed out, malformed answer).
    pub(crate) failures: u64,
    /// Requests decided by the `unavailable` fallback (admitted on the local
    /// limit, or shed).
    pub(crate) fallbacks: u64,
    /// Requests refused because the fleet had no permit for them while they
    /// could wait (503, reason `budget`).
    pub(crate) shed: u64,
    /// Watches opened (calls the object keeps until others need permits).
    pub(crate) watches: u64,
}

/// One budgeted origin in this isolate.
pub(crate) struct OriginBudget {
    /// The origin's name: the object is `idFromName(name)`.
    pub(crate) name: String,
    pub(crate) namespace: JsValue,
    pub(crate) config: Budget,
    pub(super) holder: RefCell<LeaseHolder>,
    /// Requests waiting for a permit, and the latest time any of them waits
    /// until (ms; reset when none waits).
    pub(super) waiting: Cell<(u32, u64)>,
    /// Bumped by every answer and every call that ends: waiters look again.
    pub(super) generation: Cell<u64>,
    pub(super) wakers: RefCell<Vec<Waker>>,
    /// The number of the lease call under way (answers of older ones are
    /// ignored), when it was sent, and how long the object may keep it.
    pub(super) call: Cell<(u64, u64, u64)>,
    /// The number of the watch open (answers of older ones are ignored).
    pub(super) watch: Cell<u64>,
    /// When the renewal timer is due, if one is armed.
    pub(super) timer: Cell<Option<u64>>,
    pub(crate) counters: Cell<BudgetCounters>,
}

/// Every origin's budget, in `config.origins` order (`None`: no budget).
/// A budget whose binding is not a namespace in `env` is a configuration
/// error naming `origins.<name>.budget.binding`.
pub(crate) fn budgets(
    env: &JsValue,
    config: &Config,
) -> Result<Vec<Option<Rc<OriginBudget>>>, ConfigError> {
    let mut errors = Vec::new();
    let mut budgets = Vec::new();
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
        if budget.lease_ttl_ms < 2 * timeout_ms {
            log_warning(&format!(
                "edgeshed: origins.{0}.budget.leaseTtlMs ({1}) should be at least twice \
                 origins.{0}.timeoutMs ({2}): an isolate admits no call that could outlive its \
                 lease, and only calls of up to half the TTL are sure to end before the permits of \
                 an isolate that died are granted again",
                origin.name, budget.lease_ttl_ms, timeout_ms
            ));
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
        budgets.push(Some(Rc::new(OriginBudget {
            name: origin.name.clone(),
            namespace,
            config: budget.clone(),
            holder: RefCell::new(LeaseHolder::new(holder)),
            waiting: Cell::new((0, 0)),
            generation: Cell::new(0),
            wakers: RefCell::new(Vec::new()),
            call: Cell::new((0, 0, 0)),
            watch: Cell::new(0),
            timer: Cell::new(None),
            counters: Cell::new(BudgetCounters::default()),
        })));
    }
    if errors.is_empty() {
        Ok(budgets)
    } else {
        Err(ConfigError::all(errors))
    }
}

/// A budget permit: the call counts against the lease until dropped.
pub(crate) struct BudgetPermit {
    pub(super) budget: Rc<OriginBudget>,
    pub(super) ctx: JsValue,
}

impl Drop for BudgetPermit {
    fn drop(&mut self) {
        self.budget.holder.borrow_mut().finish(now_ms());
        // a request waiting for a permit may take this one
        self.budget.changed();
        self.budget.kick(&self.ctx);
    }
}

impl OriginBudget {
    pub(super) fn count(&self, update: impl FnOnce(&mut BudgetCounters)) {
        let mut counters = self.counters.get();
        update(&mut counters);
        self.counters.set(counters);
    }

    /// Permits this isolate holds under an unexpired lease.
    pub(crate) fn leased(&self) -> u32 {
        self.holder.borrow().held(now_ms())
    }

    /// What this isolate may use of the budget now: the permits it may
    /// admit under (or the `unavailable` fallback), at most its local limit.
    pub(crate) fn usable(&self) -> u32 {
        self.holder.borrow().effective_limit(now_ms())
    }

    /// The budget's `adaptive` section as the object reads it (`{ algorithm,
    /// initialLimit, minLimit, maxLimit }`), or `undefined` for a fixed
    /// limit.
    pub(crate) fn adaptive_js(&self) -> JsValue {
        let Some(adaptive) = &self.config.adaptive else {
            return JsValue::UNDEFINED;
        };
        let object = js_sys::Object::new();
        let bounds = adaptive.bounds;
        let fields: [(&str, JsValue); 4] = [
            ("algorithm", JsValue::from_str(adaptive.algorithm)),
            ("initialLimit", JsValue::from(bounds.initial() as f64)),
            ("minLimit", JsValue::from(bounds.min() as f64)),
            ("maxLimit", JsValue::from(bounds.max() as f64)),
        ];
        for (key, value) in fields {
            // setting a plain property of a fresh object does not throw
            let _ = js_sys::Reflect::set(&object, &JsValue::from_str(key), &value);
        }
        object.into()
    }

    /// How long a call may take before it counts as failed, beyond the time
    /// the object may keep it.
    pub(super) fn call_timeout_ms(&self) -> u64 {
        (self.config.lease_ttl_ms / 2).max(50)
    }

    /// Wakes the requests waiting for a permit: something changed.
    pub(super) fn changed(&self) {
        self.generation.set(self.generation.get().wrapping_add(1));
        let wakers = core::mem::take(&mut *self.wakers.borrow_mut());
        for waker in wakers {
            waker.wake();
        }
    }
}
