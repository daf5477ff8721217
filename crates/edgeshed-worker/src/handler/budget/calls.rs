//! The fleet budget's calls to its Durable Object: a lease call or a watch
//! when the holder wants one, their answers, and the holder's timer.

use super::state::{now_ms, OriginBudget};
use crate::budget::Grant;
use crate::handler::host::{call_lease, call_watch, later, new_holder_id};
use core::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

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

impl OriginBudget {
    /// Starts a lease call or a watch if the holder wants one now, and
    /// arms the timer for its next due time.
    pub(super) fn kick(self: &Rc<Self>, ctx: &JsValue) {
        let now = now_ms();
        let waiting = self.waiting_now();
        let (number, sent_at, wait_ms) = self.call.get();
        let (request, watch) = {
            let mut holder = self.holder.borrow_mut();
            let overdue = sent_at
                .saturating_add(wait_ms)
                .saturating_add(2 * self.call_timeout_ms());
            if holder.pending() && now > overdue {
                // Its callback never came (its request's context was torn
                // down): count it as failed, and ignore it if it still comes.
                holder.on_failure();
                self.call.set((number.wrapping_add(1), sent_at, wait_ms));
                self.count(|c| c.failures += 1);
            }
            match holder.poll(now, waiting) {
                Some(request) => (Some(request), None),
                None => (None, holder.watch(now)),
            }
        };
        if let Some(request) = request {
            self.send_lease(ctx, now, request);
        } else if let Some(watch) = watch {
            self.send_watch(ctx, watch);
        }
        self.arm(ctx);
    }

    fn send_lease(self: &Rc<Self>, ctx: &JsValue, now: u64, request: crate::budget::LeaseRequest) {
        let number = self.call.get().0.wrapping_add(1);
        self.call.set((number, now, request.wait_ms));
        self.count(|c| c.calls += 1);
        let budget = Rc::clone(self);
        let context = ctx.clone();
        let done = Closure::once_into_js(
            move |ok: bool,
                  numbers: Vec<f64>,
                  learning: bool,
                  contended: bool,
                  overloaded: bool| {
                let n = |i: usize| numbers.get(i).copied().unwrap_or(0.0);
                let grant = ok.then(|| Grant {
                    permits: n(0).clamp(0.0, f64::from(u32::MAX)) as u32,
                    ttl_ms: n(1).clamp(0.0, 3_600_000.0) as u64,
                    renew_ms: n(2).clamp(0.0, 3_600_000.0) as u64,
                    learning,
                    contended,
                    epoch: n(3).max(0.0) as u64,
                });
                budget.answered(&context, number, grant, overloaded);
            },
        );
        let report = request.report;
        let micros =
            |rtt: Option<core::time::Duration>| rtt.map_or(0.0, |rtt| rtt.as_micros() as f64);
        let numbers = [
            f64::from(self.config.max_in_flight),
            self.config.lease_ttl_ms as f64,
            f64::from(request.held),
            f64::from(request.in_use),
            f64::from(request.wanted),
            request.wait_ms as f64,
            (request.wait_ms + self.call_timeout_ms()) as f64,
            request.epoch as f64,
            report.served() as f64,
            report.dropped() as f64,
            report.rtt_total().as_micros() as f64,
            report.rtt_squares(),
            micros(report.min_rtt()),
            micros(report.max_rtt()),
            report.max_in_flight() as f64,
            request.calls_ms as f64,
        ];
        let holder = holder_id();
        call_lease(
            &self.namespace,
            &self.name,
            &holder,
            &numbers,
            &self.stated,
            done,
            ctx,
        );
    }

    fn send_watch(self: &Rc<Self>, ctx: &JsValue, watch: crate::budget::WatchRequest) {
        let number = self.watch.get().wrapping_add(1);
        self.watch.set(number);
        self.count(|c| c.watches += 1);
        let budget = Rc::clone(self);
        let context = ctx.clone();
        let done = Closure::once_into_js(move |ok: bool, contended: bool, overloaded: bool| {
            if overloaded {
                budget.count(|c| c.overloaded += 1);
            }
            budget.noticed(&context, number, ok.then_some(contended));
        });
        let numbers = [
            f64::from(self.config.max_in_flight),
            self.config.lease_ttl_ms as f64,
            watch.wait_ms as f64,
            (watch.wait_ms + self.call_timeout_ms()) as f64,
        ];
        call_watch(
            &self.namespace,
            &self.name,
            &holder_id(),
            watch.contended,
            &numbers,
            &self.stated,
            done,
            ctx,
        );
    }

    /// Arms the timer for the holder's next due time (a renewal, a give-back,
    /// a repeated ask, a retry), or for the overdue check of a call under
    /// way, unless one is armed at or before it. A timer whose context was
    /// torn down (it is overdue) is replaced.
    fn arm(self: &Rc<Self>, ctx: &JsValue) {
        let now = now_ms();
        let (_, sent_at, wait_ms) = self.call.get();
        let due = {
            let holder = self.holder.borrow();
            match holder.next_poll_at(now, self.waiting_now()) {
                Some(due) => due,
                None if holder.pending() => sent_at
                    .saturating_add(wait_ms)
                    .saturating_add(2 * self.call_timeout_ms() + 1),
                None => return,
            }
        };
        if let Some(armed) = self.timer.get() {
            let stale = now > armed.saturating_add(self.config.lease_ttl_ms);
            if armed <= due && !stale {
                return;
            }
        }
        self.timer.set(Some(due));
        let budget = Rc::clone(self);
        let context = ctx.clone();
        let tick = Closure::once_into_js(move || {
            if budget.timer.get() == Some(due) {
                budget.timer.set(None);
                budget.kick(&context);
            }
        });
        later(ctx, due.saturating_sub(now) as f64, tick);
    }

    /// The answer of lease call `number` (`None`: it failed; `overloaded`:
    /// with an `.overloaded` error, which is not retried: the holder falls
    /// back and backs off, [`LeaseHolder::on_overloaded`]): updates the
    /// holder, wakes the waiters, and calls again if the holder wants to.
    ///
    /// [`LeaseHolder::on_overloaded`]: crate::budget::LeaseHolder::on_overloaded
    fn answered(
        self: &Rc<Self>,
        ctx: &JsValue,
        number: u64,
        grant: Option<Grant>,
        overloaded: bool,
    ) {
        if self.call.get().0 != number {
            return;
        }
        {
            let mut holder = self.holder.borrow_mut();
            match grant {
                Some(grant) => holder.on_grant(now_ms(), grant),
                None if overloaded => holder.on_overloaded(),
                None => holder.on_failure(),
            }
        }
        if grant.is_none() {
            self.count(|c| {
                c.failures += 1;
                c.overloaded += u64::from(overloaded);
            });
        }
        self.changed();
        self.kick(ctx);
    }

    /// The answer of watch `number` (`None`: it failed).
    fn noticed(self: &Rc<Self>, ctx: &JsValue, number: u64, contended: Option<bool>) {
        if self.watch.get() != number {
            return;
        }
        {
            let mut holder = self.holder.borrow_mut();
            match contended {
                Some(contended) => holder.on_notice(now_ms(), contended),
                None => holder.on_watch_failure(now_ms()),
            }
        }
        self.kick(ctx);
    }
}
