//! Admission under the fleet budget: a request that its isolate's lease
//! cannot cover waits, within its own bounded admission time, for the
//! permits its holder asks for.

use super::state::{now_ms, OriginBudget};
use crate::budget::Unavailable;
use crate::failure::{Failure, Refusal};
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use edgeshed::time::{Clock, Instant};
use edgeshed_wasm::task::RemoteWake;
use edgeshed_wasm::JsClock;
use futures_util::future::select;
use std::rc::Rc;
use wasm_bindgen::JsValue;

/// A budget permit: the call counts against the lease until dropped.
pub(crate) struct BudgetPermit {
    budget: Rc<OriginBudget>,
    ctx: JsValue,
}

impl Drop for BudgetPermit {
    fn drop(&mut self) {
        self.budget.holder.borrow_mut().finish(now_ms());
        // a request waiting for a permit may take this one
        self.budget.changed();
        self.budget.kick(&self.ctx);
    }
}

/// Counts a request as waiting for the budget while it lives.
struct Waiting<'a>(&'a OriginBudget);

impl<'a> Waiting<'a> {
    fn new(budget: &'a OriginBudget, until: u64) -> Self {
        let (count, latest) = budget.waiting.get();
        budget
            .waiting
            .set((count.saturating_add(1), latest.max(until)));
        Self(budget)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let (count, latest) = self.0.waiting.get();
        let count = count.saturating_sub(1);
        self.0
            .waiting
            .set((count, if count == 0 { 0 } else { latest }));
    }
}

/// Ready once something changed (an answer, a call that ended) after `seen`.
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
    /// The synchronous first step of admission: a permit now if the lease
    /// (or the `unavailable` fallback) covers one, without waiting or
    /// counting the call as waiting. `None`: [`admit`](Self::admit) waits.
    pub(crate) fn try_now(self: &Rc<Self>, ctx: &JsValue) -> Option<BudgetPermit> {
        let reachable = {
            let mut holder = self.holder.borrow_mut();
            holder.try_admit(now_ms()).then(|| holder.reachable())?
        };
        Some(self.admitted(ctx, reachable))
    }

    /// A call admitted under the lease (or, if the object is `reachable`
    /// no more, by the fallback): counted, and the holder told.
    fn admitted(self: &Rc<Self>, ctx: &JsValue, reachable: bool) -> BudgetPermit {
        if !reachable {
            self.count(|c| c.fallbacks += 1);
        }
        self.kick(ctx);
        BudgetPermit {
            budget: Rc::clone(self),
            ctx: ctx.clone(),
        }
    }

    /// Admits one call to the origin. `limit`: the earlier of the request's
    /// deadline and the origin's timeout, and which it is.
    ///
    /// A request the lease cannot cover waits for its holder's ask (which the
    /// object answers as soon as permits come back), at most the holder's
    /// patience (or, past it, until the answer of a call under way) and never
    /// past `limit`. Then it is refused: 503 `"reason":"budget"` (counted),
    /// or 504 if its deadline passed first. It is refused at once when its
    /// holder holds its fair share of a budget others want too and has no
    /// call in flight
    /// ([`LeaseHolder::refuses_at_once`](crate::budget::LeaseHolder::refuses_at_once)):
    /// no permit is coming then. With calls in flight it waits for one of
    /// them to end (its permit goes back to the lease).
    /// With the object unreachable and `"unavailable": "shed"`, a request
    /// beyond what is still leased is refused at once (a fallback).
    pub(crate) async fn admit(
        self: &Rc<Self>,
        ctx: &JsValue,
        limit: Option<(Instant, Failure)>,
    ) -> Result<BudgetPermit, Failure> {
        let arrived = now_ms();
        let patience = self.holder.borrow().config().patience_ms;
        // The request's own limit, on the holder's clock (Date.now()).
        let own = limit.map(|(at, why)| {
            let left = at.saturating_duration_since(JsClock.now()).as_millis();
            (
                arrived.saturating_add(u64::try_from(left).unwrap_or(u64::MAX)),
                why,
            )
        });
        let give_up = own.map_or(arrived + patience, |(at, _)| at.min(arrived + patience));
        let waiting = Waiting::new(self, give_up);
        loop {
            let admitted = {
                let mut holder = self.holder.borrow_mut();
                holder.try_admit(now_ms()).then(|| holder.reachable())
            };
            if let Some(reachable) = admitted {
                drop(waiting);
                return Ok(self.admitted(ctx, reachable));
            }
            self.kick(ctx);
            let now = now_ms();
            let (pending, reachable, at_once) = {
                let holder = self.holder.borrow();
                (
                    holder.pending(),
                    holder.reachable(),
                    holder.refuses_at_once(now),
                )
            };
            let fallback = !reachable && self.config.unavailable == Unavailable::Shed;
            // Past its patience a request still waits for the answer of a
            // call under way (a slow object is not a full fleet), never past
            // its own limit.
            let own_passed = own.is_some_and(|(at, _)| now >= at);
            if own_passed || (!pending && (now >= give_up || fallback || at_once)) {
                return Err(self.refuse(own, now, fallback));
            }
            let changed = Changed {
                budget: self,
                seen: self.generation.get(),
            };
            let changed = core::pin::pin!(RemoteWake::new(changed));
            let until = if now < give_up {
                give_up
            } else {
                own.map_or(now + 2 * self.call_timeout_ms(), |(at, _)| at)
            };
            let wake_at = JsClock.now() + core::time::Duration::from_millis(until - now);
            let timer = core::pin::pin!(JsClock.sleep_until(wake_at));
            let _ = select(changed, timer).await;
        }
    }

    /// The refusal of a request that waited until `now`: its deadline (504)
    /// if that is what passed, else the budget's (503), counted.
    fn refuse(&self, own: Option<(u64, Failure)>, now: u64, fallback: bool) -> Failure {
        if let Some((at, Failure::Deadline)) = own {
            if now >= at {
                return Failure::Deadline;
            }
        }
        self.count(|c| {
            c.shed += 1;
            c.fallbacks += u64::from(fallback);
        });
        Failure::Overloaded(Refusal::Budget)
    }
}
