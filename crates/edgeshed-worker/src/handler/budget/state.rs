//! One budgeted origin's fleet-budget state in this isolate: its
//! [`LeaseHolder`], the requests waiting for a permit, the calls to its
//! `EdgeshedBudget` Durable Object under way, and its counters.
//!
//! - A call is admitted when the holder's effective limit allows it
//!   (min(local limit, permits leased), or the `unavailable` fallback).
//! - Otherwise the request waits, at most the holder's patience (TTL / 10)
//!   and never past its deadline or the origin's `timeoutMs`, while the
//!   holder asks for what it needs; the object keeps that ask and answers it
//!   as soon as permits come back (`admit.rs`). A request still without a
//!   permit then is refused: 503 with `"reason":"budget"`, counted in
//!   `budgetShed`.
//! - The holder's calls (asks, renewals, give-backs, its watch) are started
//!   by admissions, completions, answers and a timer at the holder's next
//!   due time ([`LeaseHolder::next_poll_at`]; see `calls.rs`). Each runs
//!   under `ctx.waitUntil` and reports back through a callback.

use crate::budget::{HolderConfig, LeaseHolder, Waiting};
use crate::config::Budget;
use core::cell::{Cell, RefCell};
use core::task::Waker;
use wasm_bindgen::prelude::*;

/// `Date.now()` in whole milliseconds (0 if unusable).
pub(crate) fn now_ms() -> u64 {
    let now = js_sys::Date::now();
    if now.is_finite() && now > 0.0 {
        now as u64
    } else {
        0
    }
}

/// `budget.adaptive` as the object reads it, or `undefined` (fixed).
fn adaptive_js(config: &Budget) -> JsValue {
    let Some(adaptive) = &config.adaptive else {
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
    /// Calls the object answered with an `.overloaded` error (never
    /// retried; counted in `failures` too).
    pub(crate) overloaded: u64,
}

/// One budgeted origin in this isolate.
pub(crate) struct OriginBudget {
    /// The origin's name: the object is `idFromName(name)`.
    pub(crate) name: String,
    pub(crate) namespace: JsValue,
    pub(crate) config: Budget,
    /// What every call states besides its numbers: `{ adaptive, version }`
    /// (the budget's `adaptive` section and this Worker's deploy version).
    pub(super) stated: JsValue,
    pub(crate) holder: RefCell<LeaseHolder>,
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

impl OriginBudget {
    /// The budget of origin `name` against the objects of `namespace`, in
    /// a Worker of deploy version `version` (`{ timestamp, id }`, or
    /// `undefined`).
    pub(crate) fn new(
        (name, namespace): (String, JsValue),
        config: Budget,
        holder: HolderConfig,
        version: &JsValue,
    ) -> Self {
        let stated = js_sys::Object::new();
        let parts = [
            ("adaptive", adaptive_js(&config)),
            ("version", version.clone()),
        ];
        for (key, value) in parts {
            // setting a plain property of a fresh object does not throw
            let _ = js_sys::Reflect::set(&stated, &JsValue::from_str(key), &value);
        }
        Self {
            name,
            namespace,
            stated: stated.into(),
            config,
            holder: RefCell::new(LeaseHolder::new(holder)),
            waiting: Cell::new((0, 0)),
            generation: Cell::new(0),
            wakers: RefCell::new(Vec::new()),
            call: Cell::new((0, 0, 0)),
            watch: Cell::new(0),
            timer: Cell::new(None),
            counters: Cell::new(BudgetCounters::default()),
        }
    }

    /// The requests waiting for a permit, as the holder sees them.
    pub(super) fn waiting_now(&self) -> Waiting {
        let (count, until) = self.waiting.get();
        Waiting { count, until }
    }

    pub(super) fn count(&self, update: impl FnOnce(&mut BudgetCounters)) {
        let mut counters = self.counters.get();
        update(&mut counters);
        self.counters.set(counters);
    }

    /// Permits this isolate holds under an unexpired lease.
    pub(crate) fn leased(&self) -> u32 {
        self.holder.borrow().held(now_ms())
    }

    /// The limit stats show for the origin ([`LeaseHolder::shown_limit`]):
    /// what it may use of the budget now, or idle without a lease what its
    /// next request asks for at most (its local limit, at most the fleet
    /// limit: `budget.maxInFlight`, or an adaptive budget's `maxLimit`).
    pub(crate) fn shown_limit(&self) -> u32 {
        let fleet = self
            .config
            .adaptive
            .as_ref()
            .map_or(self.config.max_in_flight, |adaptive| {
                u32::try_from(adaptive.bounds.max()).unwrap_or(u32::MAX)
            });
        self.holder
            .borrow()
            .shown_limit(now_ms(), self.waiting_now(), fleet)
    }

    /// The budget's `adaptive` section as the object reads it (`{ algorithm,
    /// initialLimit, minLimit, maxLimit }`), or `undefined` for a fixed
    /// limit.
    pub(crate) fn adaptive_js(&self) -> JsValue {
        adaptive_js(&self.config)
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
