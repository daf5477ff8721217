//! The contract's JavaScript errors.
//!
//! A refusal says which limit refused the call and why ("limit 1 reached,
//! maxQueue 0: shed at once"). A shed's stack starts at the caller's
//! `run`/`fetch` call, and so do the errors of a call that queued or has a
//! deadline (its place is kept from the call, as the error comes later from
//! a timer); see glue.js for how, and [`CallContext::here`] for the cost. Messages are made in
//! glue.js from numbers: the shed path passes no string out of the wasm
//! (measured, see `docs/benchmarks-log-2026.md`, "Shed path: no strings out
//! of the wasm per rejection").

use crate::criticality::criticality_index;
use crate::host::{
    call_site, deadline_error_at, error_with_status, overloaded_error_at, rate_limited_error_at,
    rate_limited_rejection, shed_rejection,
};
use core::time::Duration;
use edgeshed::admission::{Admission, AdmitError, Criticality, Policy, Reserve};
use edgeshed::error::{OverloadCause, Overloaded, RateLimited};
use edgeshed_wasm::clock::JsClock;
use wasm_bindgen::prelude::*;

/// Milliseconds as the `u32` the messages show.
fn millis(duration: Duration) -> u32 {
    u32::try_from(duration.as_millis()).unwrap_or(u32::MAX)
}

/// The limit a call was up against: what its refusal says.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limit {
    limit: u32,
    max_queue: u32,
    queue_timeout_ms: u32,
    /// What the call's criticality may hold of `limit` (its reserve's ceiling).
    ceiling: u32,
}

impl Limit {
    /// `admission`'s current limit and queue, for `call`.
    pub(crate) fn of(admission: &Admission<JsClock>, call: &CallContext) -> Self {
        let (max_queue, queue_timeout_ms) = match admission.policy() {
            Policy::Queue { max_queue, timeout } => (max_queue, millis(timeout)),
            _ => (0, 0),
        };
        let limit = admission.semaphore().limit();
        let ceiling = call.reserve.ceiling(limit, call.criticality);
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Self {
            limit: count(limit),
            max_queue: count(max_queue),
            queue_timeout_ms,
            ceiling: count(ceiling),
        }
    }
}

/// A queue timeout at arrival, as glue.js numbers it: `maxQueueWait:
/// "auto"` found the call's expected wait longer than one service time
/// (its own message; its reason is `"queue_timeout"` all the same).
const EXPECTED_WAIT_TOO_LONG: u32 = 4;
/// `OVERLOAD_REASONS`' number for a waiter refused by `clearQueue()`.
const CLEARED: u32 = 5;
/// `OVERLOAD_REASONS`' number for a call refused by a closed limiter.
const CLOSED: u32 = 6;

/// An overload's cause as glue.js numbers it (`OVERLOAD_REASONS`).
fn cause_index(error: &Overloaded) -> u32 {
    match error.cause() {
        OverloadCause::QueueTimeout => 1,
        OverloadCause::Displaced => 2,
        OverloadCause::Budget => 3,
        _ => 0,
    }
}

/// A 429's `retryAfterMs` as glue.js takes it: -1 for none (the fair share).
fn retry_after_ms(limited: &RateLimited) -> f64 {
    limited
        .retry_after()
        .map_or(-1.0, |after| millis(after).into())
}

/// What the errors of a `run` or a `fetch` call say about it: its deadline,
/// criticality and reserve.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CallContext {
    /// Its `deadlineMs`, if any (in ms: 8 bytes in every queued call's
    /// future where a `Duration` took 16).
    pub(crate) deadline_ms: Option<u32>,
    /// Its criticality.
    pub(crate) criticality: Criticality,
    /// The reserve in effect for it.
    pub(crate) reserve: Reserve,
}

impl CallContext {
    /// A promise rejected with the error for a call refused at once; its
    /// stack is captured now, in the caller's call.
    pub(crate) fn rejection(self, error: AdmitError, limit: Limit) -> js_sys::Promise {
        match error {
            AdmitError::Overloaded(overloaded) if cause_index(&overloaded) == 0 => shed_rejection(
                limit.limit,
                limit.max_queue,
                limit.ceiling,
                criticality_index(self.criticality),
            ),
            AdmitError::RateLimited(limited) => {
                rate_limited_rejection(limit.limit, retry_after_ms(&limited))
            }
            AdmitError::Overloaded(overloaded) if cause_index(&overloaded) == 1 => {
                let caller = self.here(Some(limit));
                js_sys::Promise::reject(&overloaded_error_at(
                    &caller.site,
                    EXPECTED_WAIT_TOO_LONG,
                    limit.limit,
                    limit.max_queue,
                    limit.queue_timeout_ms,
                ))
            }
            other => js_sys::Promise::reject(&self.here(Some(limit)).error(other)),
        }
    }

    /// The caller's place, for an error raised later: kept when the call
    /// has a deadline or was not admitted at once (`queued_behind`: it
    /// waits for that limit, or is refused with it now). So an un-awaited
    /// `run` whose queue timeout crashes Node.js names its caller's line.
    ///
    /// The cost falls on calls that queue only, never on one admitted at
    /// once (the fast path does not come here): one crossing into glue.js
    /// (`callSite`), beside the future, the task and the timer the queued
    /// call costs anyway; the stack itself is captured once the call has
    /// returned, at most one per millisecond (glue.js `stackBudget`), so a
    /// queue that fills under sustained overload does not capture one per
    /// waiter.
    pub(crate) fn here(self, queued_behind: Option<Limit>) -> Caller {
        let kept = self.deadline_ms.is_some() || queued_behind.is_some();
        Caller {
            site: if kept {
                call_site()
            } else {
                JsValue::UNDEFINED
            },
            call: self,
            limit: queued_behind,
        }
    }
}

/// A call that may be refused later, and where it was made.
pub(crate) struct Caller {
    site: JsValue,
    call: CallContext,
    /// The limit it waits for, once queued.
    limit: Option<Limit>,
}

impl Caller {
    /// The error for a refused admission.
    pub(crate) fn error(&self, error: AdmitError) -> JsValue {
        let limit = self.limit.unwrap_or(Limit {
            limit: 0,
            max_queue: 0,
            queue_timeout_ms: 0,
            ceiling: 0,
        });
        match error {
            AdmitError::Overloaded(overloaded) => overloaded_error_at(
                &self.site,
                cause_index(&overloaded),
                limit.limit,
                limit.max_queue,
                limit.queue_timeout_ms,
            ),
            AdmitError::RateLimited(limited) => {
                rate_limited_error_at(&self.site, limit.limit, retry_after_ms(&limited))
            }
            AdmitError::Expired => self.expired(false),
            AdmitError::Closed => overloaded_error_at(&self.site, CLOSED, 0, 0, 0),
            // A refusal added to the core later: still a 503, with its message.
            other => error_with_status("OverloadedError", &other.to_string(), 503),
        }
    }

    /// The `OverloadedError` of a waiter refused by `clearQueue()`.
    pub(crate) fn cleared(&self) -> JsValue {
        overloaded_error_at(&self.site, CLEARED, 0, 0, 0)
    }

    /// `DeadlineError`: the call's deadline passed, queued or `running`.
    pub(crate) fn expired(&self, running: bool) -> JsValue {
        let deadline_ms = self.call.deadline_ms.unwrap_or(0);
        deadline_error_at(&self.site, deadline_ms, running)
    }
}

/// A `TypeError` with `message`.
pub(crate) fn type_error(message: &str) -> JsValue {
    js_sys::TypeError::new(message).into()
}

/// A `RangeError` with `message`.
pub(crate) fn range_error(message: &str) -> JsValue {
    js_sys::RangeError::new(message).into()
}
