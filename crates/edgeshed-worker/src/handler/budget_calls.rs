//! The fleet budget's calls to its Durable Object: starting a lease call
//! when the holder wants one, its answer, and the holder's renewal tick.

use super::budget::OriginBudget;
use crate::budget::Grant;
use core::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/handler/budget_glue.js")]
extern "C" {
    /// A fresh random holder id.
    #[wasm_bindgen(js_name = newHolderId)]
    fn new_holder_id() -> String;
    /// One lease call; `done(ok, permits, ttlMs, renewMs, learning)` is called once, later.
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

/// `Date.now()` in whole milliseconds (0 if unusable).
pub(super) fn now_ms() -> u64 {
    let now = js_sys::Date::now();
    if now.is_finite() && now > 0.0 {
        now as u64
    } else {
        0
    }
}

impl OriginBudget {
    /// Starts a call to the object if the holder wants one now.
    pub(super) fn kick(self: &Rc<Self>, ctx: &JsValue) {
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
        let done = Closure::once_into_js(
            move |ok: bool, permits: f64, ttl: f64, renew: f64, learning: bool| {
                budget.answered(number, ok, [permits, ttl, renew], learning);
            },
        );
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
    pub(super) fn arm(self: &Rc<Self>, ctx: &JsValue) {
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
    /// `numbers`: the grant's permits, TTL and renewal time (ms).
    fn answered(&self, number: u64, ok: bool, numbers: [f64; 3], learning: bool) {
        let [permits, ttl, renew] = numbers;
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
                    renew_ms: renew.clamp(0.0, 3_600_000.0) as u64,
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
