//! The contract's JavaScript errors.
//!
//! A refusal says which limit refused the call and why ("limit 1 reached,
//! maxQueue 0: shed at once"). A shed's stack starts at the caller's
//! `run`/`fetch` call, and so do the errors of a call with a deadline (its
//! place is kept from the call, as the error comes later from a timer); see
//! glue.js for how and why not for every queued call. Messages are made in
//! glue.js from numbers: the shed path passes no string out of the wasm
//! (measured, see `docs/benchmarks-log-2026.md`, "Shed path: no strings out
//! of the wasm per rejection").

use core::time::Duration;
use edgeshed::admission::{Admission, AdmitError, Policy};
use edgeshed_wasm::clock::JsClock;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/glue.js")]
extern "C" {
    /// An `Error` with the given `name`, `message` and HTTP-like `status`,
    /// made in JavaScript (one boundary crossing instead of four).
    #[wasm_bindgen(js_name = errorWithStatus)]
    fn error_with_status(name: &str, message: &str, status: u16) -> JsValue;
    /// A promise rejected with an `OverloadedError` whose stack starts at
    /// the caller of `run` (or `fetch`): the shed path's one crossing.
    #[wasm_bindgen(js_name = shedRejection)]
    fn shed_rejection(limit: u32, max_queue: u32) -> js_sys::Promise;
    /// Where a call was made: an object that gets the caller's stack once
    /// the call returns, for an error raised later ([`Caller::error`],
    /// [`Caller::expired`]).
    #[wasm_bindgen(js_name = callSite)]
    fn call_site() -> JsValue;
    /// An `OverloadedError` with the stack of `site`.
    #[wasm_bindgen(js_name = overloadedErrorAt)]
    fn overloaded_error_at(
        site: &JsValue,
        queue_timeout: bool,
        limit: u32,
        max_queue: u32,
        timeout_ms: u32,
    ) -> JsValue;
    /// A `DeadlineError` with the stack of `site` (or none: `undefined`).
    #[wasm_bindgen(js_name = deadlineErrorAt)]
    fn deadline_error_at(site: &JsValue, deadline_ms: u32, running: bool) -> JsValue;
}

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
}

impl Limit {
    /// `admission`'s current limit and queue.
    pub(crate) fn of(admission: &Admission<JsClock>) -> Self {
        let (max_queue, queue_timeout_ms) = match admission.policy() {
            Policy::Queue { max_queue, timeout } => (max_queue, millis(timeout)),
            _ => (0, 0),
        };
        let limit = admission.semaphore().limit();
        Self {
            limit: u32::try_from(limit).unwrap_or(u32::MAX),
            max_queue: u32::try_from(max_queue).unwrap_or(u32::MAX),
            queue_timeout_ms,
        }
    }
}

/// Whether an overload was a queue timeout (else a shed).
fn is_queue_timeout(error: &edgeshed::error::Overloaded) -> bool {
    error.cause() == edgeshed::error::OverloadCause::QueueTimeout
}

/// A `run` or a `fetch` call, as its errors describe it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Call {
    /// Its `deadlineMs`, if any.
    pub(crate) deadline: Option<Duration>,
}

impl Call {
    /// A promise rejected with the error for a call refused at once; its
    /// stack is captured now, in the caller's call.
    pub(crate) fn rejection(self, error: AdmitError, limit: Limit) -> js_sys::Promise {
        match error {
            AdmitError::Overloaded(overloaded) if !is_queue_timeout(&overloaded) => {
                shed_rejection(limit.limit, limit.max_queue)
            }
            other => js_sys::Promise::reject(&self.here(Some(limit)).error(other)),
        }
    }

    /// The caller's place (for errors raised later), when the call has a
    /// deadline: capturing a stack for every queued call would cost more
    /// than its queueing (see glue.js), so a queue timeout without a
    /// deadline has no stack.
    pub(crate) fn here(self, queued_behind: Option<Limit>) -> Caller {
        Caller {
            site: match self.deadline {
                Some(_) => call_site(),
                None => JsValue::UNDEFINED,
            },
            call: self,
            limit: queued_behind,
        }
    }
}

/// A call that may be refused later, and where it was made.
pub(crate) struct Caller {
    site: JsValue,
    call: Call,
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
        });
        match error {
            AdmitError::Overloaded(overloaded) => overloaded_error_at(
                &self.site,
                is_queue_timeout(&overloaded),
                limit.limit,
                limit.max_queue,
                limit.queue_timeout_ms,
            ),
            AdmitError::Expired => self.expired(false),
            AdmitError::Closed => error_with_status("ClosedError", "limiter closed", 503),
            // A refusal added to the core later: still a 503, with its message.
            other => error_with_status("OverloadedError", &other.to_string(), 503),
        }
    }

    /// `DeadlineError`: the call's deadline passed, queued or `running`.
    pub(crate) fn expired(&self, running: bool) -> JsValue {
        let deadline_ms = self.call.deadline.map_or(0, millis);
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
