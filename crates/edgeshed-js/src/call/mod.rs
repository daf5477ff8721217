//! The two calls of the `Limiter` class, `run` and `fetch`, and the
//! admission they share.
//!
//! Admission is decided synchronously when the call is made (stats, FIFO
//! order and immediate rejections reflect the call at once); a call that
//! has to wait continues as an executor task, which arms its timers itself.
//!
//! A slot counts work that is actually running: when a deadline or an abort
//! rejects a caller whose work has started, the caller gets its error at
//! once but the permit stays held until the work itself settles (counted in
//! `stats().abandoned`).

mod fetch;
mod run;

pub(crate) use fetch::fetch;
pub(crate) use run::run;

use crate::counters::CallCounters;
use crate::errors::{CallContext, Caller, Limit};
use crate::options::CallOptions;
use core::task::Poll;
use edgeshed::admission::{Admission, Admit, AdmitError, Call};
use edgeshed::semaphore::Permit;
use edgeshed::time::{Clock, Instant};
use edgeshed_wasm::abort::{abort_reason, Aborted};
use edgeshed_wasm::clock::JsClock;
use edgeshed_wasm::task::RemoteWake;
use futures_util::future::{select, Either};
use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

/// The absolute deadline of a call that starts now.
fn deadline_of(options: &CallOptions) -> Option<Instant> {
    options.deadline.map(|budget| JsClock.now() + budget)
}

/// A call's admission, decided synchronously.
enum Admitting {
    Admitted(Permit),
    /// Holding its place in the queue; `Admit` is `Unpin`, so it moves into
    /// the task, whose first poll arms its timer.
    Waiting(Admit<JsClock>),
}

impl Admitting {
    /// Where `call` was made, kept for an error it may still get: it waits
    /// for a slot (behind `admission`'s limit) or has a deadline.
    fn caller(&self, call: CallContext, admission: &Admission<JsClock>) -> Caller {
        let queued_behind =
            matches!(self, Admitting::Waiting(_)).then(|| Limit::of(admission, &call));
        call.here(queued_behind)
    }
}

/// Why a call was not admitted now: the core refused it, or its signal had
/// aborted already (its reason).
enum Refusal {
    Refused(AdmitError),
    Aborted(JsValue),
}

impl Refusal {
    /// A promise rejected with the refusal's error (which names the limit
    /// that refused `call`, its stack starting at the caller's call).
    fn into_rejection(self, call: CallContext, admission: &Admission<JsClock>) -> js_sys::Promise {
        match self {
            Refusal::Refused(error) => call.rejection(error, Limit::of(admission, &call)),
            Refusal::Aborted(reason) => js_sys::Promise::reject(&reason),
        }
    }
}

/// Starts a call's admission, for `run` and `fetch` alike: what a refusal's
/// message needs (`CallContext`) and the admission decided now; a refusal comes back
/// as the rejected promise to return.
fn begin(
    counters: &CallCounters,
    admission: &Admission<JsClock>,
    deadline: Option<Instant>,
    options: &mut CallOptions,
) -> Result<(CallContext, Admitting), js_sys::Promise> {
    let call = CallContext {
        deadline: options.deadline,
        criticality: options.criticality,
        reserve: counters.reserve_for(options, admission),
    };
    match start_admission(admission, deadline, options) {
        Ok(admitting) => Ok((call, admitting)),
        Err(refusal) => Err(refusal.into_rejection(call, admission)),
    }
}

/// Decides admission now: admitted, queued (keeps its place), or refused.
/// `options` gives the call's signal, criticality and key.
fn start_admission(
    admission: &Admission<JsClock>,
    deadline: Option<Instant>,
    options: &mut CallOptions,
) -> Result<Admitting, Refusal> {
    let signal = options.signal.as_ref();
    if let Some(signal) = signal {
        // Read through the guarded helper: a foreign request's signal
        // throws in workerd.
        let aborted = abort_reason(signal);
        if !aborted.is_undefined() {
            return Err(Refusal::Aborted(
                js_sys::Reflect::get(&aborted, &"reason".into()).unwrap_or_default(),
            ));
        }
    }
    // The common case first: a free slot, taken without a future (a keyed
    // call needs the fair share's check, a rate limit its own: both are
    // made by `admit_call`; `try_admit_as` declines with a rate limit).
    if deadline.is_none() && options.key.is_none() {
        if let Some(permit) = admission.try_admit_as(options.criticality) {
            return Ok(Admitting::Admitted(permit));
        }
    }
    let call = Call::new(options.criticality)
        .with_optional_key(options.key.take())
        .with_weight(options.weight);
    let mut admit = match deadline {
        Some(at) => admission.admit_call_before(call, at),
        None => admission.admit_call(call),
    };
    match admit.enter() {
        Poll::Ready(Ok(permit)) => Ok(Admitting::Admitted(permit)),
        Poll::Ready(Err(error)) => Err(Refusal::Refused(error)),
        Poll::Pending => Ok(Admitting::Waiting(admit)),
    }
}

/// Finishes admission, giving up when `signal` aborts; a refusal is
/// `caller`'s error.
async fn finish_admission(
    admitting: Admitting,
    signal: Option<AbortSignal>,
    caller: &Caller,
) -> Result<Permit, JsValue> {
    let admit = match admitting {
        Admitting::Admitted(permit) => return Ok(permit),
        Admitting::Waiting(admit) => RemoteWake::new(admit),
    };
    let Some(signal) = signal else {
        return admit.await.map_err(|error| caller.error(error));
    };
    match select(Aborted::new(signal), admit).await {
        Either::Left((reason, _)) => Err(reason),
        Either::Right((admitted, _)) => admitted.map_err(|error| caller.error(error)),
    }
}

/// The caller gave up on running work (deadline, abort): `permit` stays held
/// until `work` (a promise or value) settles, and the call is counted.
fn abandon(permit: Permit, work: &JsValue, counters: &CallCounters) {
    CallCounters::bump(&counters.abandoned);
    edgeshed_wasm::held::hold_until_settled(permit, work);
}
