//! The fleet budget in the isolate: one [`OriginBudget`] per budgeted
//! origin drives a [`LeaseHolder`] against the origin's `EdgeshedBudget`
//! Durable Object, and gates admissions after the origin's local limiter.
//!
//! - A call is admitted when the holder's effective limit allows it
//!   (min(local limit, permits leased), or the `unavailable` fallback).
//! - Otherwise the request asks for a lease (one call in flight per origin,
//!   shared by every request that waits) and waits for its answer, bounded
//!   by the request's deadline and the origin's `timeoutMs`; it is shed
//!   (503) only when no call is under way or allowed and the lease has no
//!   room: the fleet has no permit to give.
//! - Renewals and returns are started by admissions, completions and a
//!   tick every tenth of the TTL while the holder is busy or holds permits
//!   ([`LeaseHolder::poll`] decides; see `budget_calls.rs`). Each call runs
//!   under `ctx.waitUntil` and reports back through a callback, so no
//!   request waits for it unless it needs its answer.

use super::budget_calls::now_ms;
use super::origin_call::Failure;
use crate::budget::{HolderConfig, LeaseHolder, Unavailable};
use crate::config::{Budget, Config, ConfigError};
use core::cell::{Cell, RefCell};
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use edgeshed::time::{Clock, Instant};
use edgeshed_wasm::race::or_never;
use edgeshed_wasm::task::RemoteWake;
use edgeshed_wasm::JsClock;
use futures_util::future::{select, Either};
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
    /// Requests shed because the fleet had no permit to give.
    pub(crate) shed: u64,
}

/// One budgeted origin in this isolate.
pub(crate) struct OriginBudget {
    /// The origin's name: the object is `idFromName(name)`.
    pub(crate) name: String,
    pub(crate) namespace: JsValue,
    pub(crate) config: Budget,
    pub(super) holder: RefCell<LeaseHolder>,
    pub(super) local_limit: u32,
    pub(super) waiting: Cell<u32>,
    pub(super) generation: Cell<u64>,
    pub(super) wakers: RefCell<Vec<Waker>>,
    /// The number of the call under way (answers of older ones are ignored)
    /// and when it was sent.
    pub(super) call: Cell<(u64, u64)>,
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
        if let Some(timeout) = origin.timeout {
            if budget.lease_ttl_ms <= timeout.as_millis() as u64 {
                log_warning(&format!(
                    "edgeshed: origins.{0}.budget.leaseTtlMs ({1}) should exceed origins.{0}.timeoutMs ({2}): \
                     a call that outlives its isolate's lease (if the isolate dies) may then overlap \
                     with the permit re-granted to another isolate",
                    origin.name,
                    budget.lease_ttl_ms,
                    timeout.as_millis()
                ));
            }
        }
        // The most this isolate may ever ask for: its fixed limit, or the
        // adaptive limit's maximum (the local limiter, admitted first, keeps
        // the demand within the current adaptive limit).
        let local_max = origin
            .adaptive
            .as_ref()
            .map_or(origin.limit.max_in_flight, |adaptive| adaptive.bounds.max());
        let local_limit = u32::try_from(local_max).unwrap_or(u32::MAX);
        let holder = HolderConfig::new(local_limit, budget.lease_ttl_ms, budget.unavailable);
        budgets.push(Some(Rc::new(OriginBudget {
            name: origin.name.clone(),
            namespace,
            config: budget.clone(),
            holder: RefCell::new(LeaseHolder::new(holder)),
            local_limit,
            waiting: Cell::new(0),
            generation: Cell::new(0),
            wakers: RefCell::new(Vec::new()),
            call: Cell::new((0, 0)),
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
    budget: Rc<OriginBudget>,
    ctx: JsValue,
}

impl Drop for BudgetPermit {
    fn drop(&mut self) {
        self.budget.holder.borrow_mut().finish(now_ms());
        self.budget.kick(&self.ctx);
    }
}

/// Counts a request as waiting for the budget while it lives.
struct Waiting<'a>(&'a OriginBudget);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.waiting.set(self.0.waiting.get().saturating_sub(1));
    }
}

/// Ready once the holder changed (a call answered) after `seen`.
struct Changed<'a> {
    budget: &'a OriginBudget,
    seen: u64,
}

impl Future for Changed<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.budget.generation.get() != self.seen {
            return Poll::Ready(());
        }
        let mut wakers = self.budget.wakers.borrow_mut();
        if !wakers.iter().any(|known| known.will_wake(cx.waker())) {
            wakers.push(cx.waker().clone());
        }
        Poll::Pending
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

    /// How long a call may take before it counts as failed.
    pub(super) fn call_timeout_ms(&self) -> u64 {
        (self.config.lease_ttl_ms / 2).max(50)
    }

    /// Admits one call to the origin within `limit` (the earlier of the
    /// request's deadline and the origin's timeout), asking for a lease if
    /// needed.
    pub(crate) async fn admit(
        self: &Rc<Self>,
        ctx: &JsValue,
        limit: Option<(Instant, Failure)>,
    ) -> Result<BudgetPermit, Failure> {
        self.waiting.set(self.waiting.get().saturating_add(1));
        let waiting = Waiting(self);
        loop {
            let admitted = {
                let mut holder = self.holder.borrow_mut();
                holder.try_admit(now_ms()).then(|| holder.reachable())
            };
            if let Some(reachable) = admitted {
                drop(waiting);
                if !reachable {
                    self.count(|c| c.fallbacks += 1);
                }
                self.kick(ctx);
                self.arm(ctx);
                return Ok(BudgetPermit {
                    budget: Rc::clone(self),
                    ctx: ctx.clone(),
                });
            }
            self.kick(ctx);
            let (pending, reachable) = {
                let holder = self.holder.borrow();
                (holder.pending(), holder.reachable())
            };
            if !pending {
                let fallback = !reachable && self.config.unavailable == Unavailable::Shed;
                self.count(|c| {
                    c.shed += 1;
                    c.fallbacks += u64::from(fallback);
                });
                return Err(Failure::Overloaded);
            }
            let changed = Changed {
                budget: self,
                seen: self.generation.get(),
            };
            let timer = or_never(limit.map(|(at, _)| JsClock.sleep_until(at)));
            let changed = core::pin::pin!(RemoteWake::new(changed));
            if let Either::Right(_) = select(changed, timer).await {
                return Err(limit.map_or(Failure::Timeout, |(_, why)| why));
            }
        }
    }
}
