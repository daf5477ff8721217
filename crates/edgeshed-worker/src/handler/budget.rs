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
//! - Renewals and returns are started by admissions and completions
//!   ([`LeaseHolder::poll`] decides); each call runs under `ctx.waitUntil`
//!   and reports back through a callback, so no request waits for it
//!   unless it needs its answer.

use super::origin_call::Failure;
use crate::budget::{Grant, HolderConfig, LeaseHolder, Unavailable};
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
    /// A fresh random holder id.
    #[wasm_bindgen(js_name = newHolderId)]
    fn new_holder_id() -> String;
    /// One lease call; `done(ok, permits, ttlMs, learning)` is called once, later.
    #[wasm_bindgen(js_name = callLease)]
    #[allow(clippy::too_many_arguments)]
    fn call_lease(
        namespace: &JsValue,
        name: &str,
        holder: &str,
        limit: u32,
        ttl_ms: f64,
        held: u32,
        in_use: u32,
        wanted: u32,
        timeout_ms: f64,
        done: JsValue,
        ctx: &JsValue,
    );
    /// `callback()` after `ms`, under `ctx.waitUntil`.
    fn later(ctx: &JsValue, ms: f64, callback: JsValue);
}

thread_local! {
    /// This isolate's holder id, made on first use.
    static HOLDER_ID: RefCell<Option<Rc<str>>> = const { RefCell::new(None) };
}

fn holder_id() -> Rc<str> {
    HOLDER_ID.with(|cell| {
        let mut cell = cell.borrow_mut();
        Rc::clone(cell.get_or_insert_with(|| Rc::from(new_holder_id())))
    })
}

fn now_ms() -> u64 {
    let now = js_sys::Date::now();
    if now.is_finite() && now > 0.0 {
        now as u64
    } else {
        0
    }
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
    holder: RefCell<LeaseHolder>,
    local_limit: u32,
    waiting: Cell<u32>,
    generation: Cell<u64>,
    wakers: RefCell<Vec<Waker>>,
    /// The number of the call under way (answers of older ones are ignored)
    /// and when it was sent.
    call: Cell<(u64, u64)>,
    /// When the renewal timer is due, if one is armed.
    timer: Cell<Option<u64>>,
    pub(crate) counters: Cell<BudgetCounters>,
}

/// Every origin's budget, in `config.origins` order (`None`: no budget).
/// A budget whose binding is not a namespace in `env` is a configuration
/// error naming `origins.<name>.budget.binding`.
pub(crate) fn budgets(env: &JsValue, config: &Config) -> Result<Vec<Option<Rc<OriginBudget>>>, ConfigError> {
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
        let local_limit = u32::try_from(origin.limit.max_in_flight).unwrap_or(u32::MAX);
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
    fn count(&self, update: impl FnOnce(&mut BudgetCounters)) {
        let mut counters = self.counters.get();
        update(&mut counters);
        self.counters.set(counters);
    }

    /// Permits this isolate holds under an unexpired lease.
    pub(crate) fn leased(&self) -> u32 {
        self.holder.borrow().held(now_ms())
    }

    /// How long a call may take before it counts as failed.
    fn call_timeout_ms(&self) -> u64 {
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

    /// Starts a call to the object if the holder wants one now.
    fn kick(self: &Rc<Self>, ctx: &JsValue) {
        let now = now_ms();
        let (number, sent_at) = self.call.get();
        let request = {
            let mut holder = self.holder.borrow_mut();
            if holder.pending() && now > sent_at.saturating_add(2 * self.call_timeout_ms()) {
                // Its callback never came (its request's context was torn
                // down): count it as failed, and ignore it if it still comes.
                holder.on_failure();
                self.call.set((number.wrapping_add(1), sent_at));
                self.count(|c| c.failures += 1);
            }
            let waiting = self.waiting.get();
            // A request that finds no lease asks for the local limit: a
            // burst reaching a cold isolate is served by one call.
            let queued = if waiting > 0 && holder.held(now) == 0 {
                waiting.max(self.local_limit)
            } else {
                waiting
            };
            holder.poll(now, queued)
        };
        let Some(request) = request else { return };
        let number = self.call.get().0.wrapping_add(1);
        self.call.set((number, now));
        self.count(|c| c.calls += 1);
        let budget = Rc::clone(self);
        let done = Closure::once_into_js(move |ok: bool, permits: f64, ttl: f64, learning: bool| {
            budget.answered(number, ok, permits, ttl, learning);
        });
        call_lease(
            &self.namespace,
            &self.name,
            &holder_id(),
            self.config.max_in_flight,
            self.config.lease_ttl_ms as f64,
            request.held,
            request.in_use,
            request.wanted,
            self.call_timeout_ms() as f64,
            done,
            ctx,
        );
    }

    /// The holder's tick: every tenth of the TTL while it is busy or holds
    /// permits, so it renews while its calls run (even with no new request)
    /// and gives permits back once idle. A timer whose context was torn
    /// down (it is overdue) is replaced by the next admission.
    fn arm(self: &Rc<Self>, ctx: &JsValue) {
        let now = now_ms();
        let every = (self.config.lease_ttl_ms / 10).max(1);
        if let Some(due) = self.timer.get() {
            if now <= due.saturating_add(4 * every + 1_000) {
                return;
            }
        }
        let due = now.saturating_add(every);
        self.timer.set(Some(due));
        let budget = Rc::clone(self);
        let context = ctx.clone();
        let tick = Closure::once_into_js(move || budget.tick(&context, due));
        later(ctx, every as f64, tick);
    }

    fn tick(self: &Rc<Self>, ctx: &JsValue, due: u64) {
        if self.timer.get() != Some(due) {
            return;
        }
        self.timer.set(None);
        self.kick(ctx);
        let busy = {
            let holder = self.holder.borrow();
            holder.in_flight() > 0 || holder.pending() || holder.held(now_ms()) > 0
        };
        if busy {
            self.arm(ctx);
        }
    }

    /// The answer of call `number`: updates the holder, wakes the waiters.
    fn answered(&self, number: u64, ok: bool, permits: f64, ttl: f64, learning: bool) {
        if self.call.get().0 != number {
            return;
        }
        let now = now_ms();
        {
            let mut holder = self.holder.borrow_mut();
            if ok {
                let grant = Grant {
                    permits: permits.clamp(0.0, f64::from(u32::MAX)) as u32,
                    ttl_ms: ttl.clamp(0.0, 3_600_000.0) as u64,
                    learning,
                };
                holder.on_grant(now, grant);
            } else {
                holder.on_failure();
            }
        }
        if !ok {
            self.count(|c| c.failures += 1);
        }
        self.generation.set(self.generation.get().wrapping_add(1));
        let wakers = core::mem::take(&mut *self.wakers.borrow_mut());
        for waker in wakers {
            waker.wake();
        }
    }
}
