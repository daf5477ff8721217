//! The two calls of the `Limiter` class, `run` and `fetch`, and the
//! admission they share.
//!
//! Admission is decided synchronously when the call is made (stats, FIFO
//! order and immediate rejections reflect the call at once); a call that
//! has to wait continues as an executor task, which arms its timers itself.
//!
//! A call that waits can also be refused by `clearQueue()`, and no call
//! starts once the limiter is closed (`lifecycle.rs`).
//!
//! A slot counts work that is actually running: when a deadline or an abort
//! rejects a caller whose work has started, the caller gets its error at
//! once but the permit stays held until the work itself settles (counted in
//! `stats().abandoned`).

mod fetch;
mod free;
mod run;

pub(crate) use fetch::fetch;
pub(crate) use free::{release_function, take_free};
pub(crate) use run::run;

use crate::counters::CallCounters;
use crate::errors::{CallContext, Caller, Limit};
use crate::host::closed_rejection;
use crate::lifecycle::{Cleared, Lifecycle};
use crate::options::CallOptions;
use core::borrow::Borrow;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use edgeshed::admission::{Admission, Admit, AdmitError, Call};
use edgeshed::semaphore::Permit;
use edgeshed::time::{Clock, Instant};
use edgeshed_wasm::abort::{abort_reason, Aborted};
use edgeshed_wasm::clock::JsClock;
use edgeshed_wasm::held::Lease;
use edgeshed_wasm::task::RemoteWake;
use std::rc::Rc;
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
    /// the task, whose first poll arms its timer. `Cleared` notes the
    /// `clearQueue()` calls from now on.
    Waiting(Admit<JsClock>, Cleared),
}

impl Admitting {
    /// Where `call` was made, kept for an error it may still get: it waits
    /// for a slot (behind `admission`'s limit) or has a deadline.
    fn caller(&self, call: CallContext, admission: &Admission<JsClock>) -> Caller {
        let queued_behind =
            matches!(self, Admitting::Waiting(..)).then(|| Limit::of(admission, &call));
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
/// message needs (`CallContext`) and the admission decided now; a refusal
/// (or a closed limiter) comes back as the rejected promise to return.
fn begin(
    counters: &CallCounters,
    admission: &Admission<JsClock>,
    deadline: Option<Instant>,
    options: &mut CallOptions,
) -> Result<(CallContext, Admitting), js_sys::Promise> {
    if counters.lifecycle.is_closed() {
        return Err(closed_rejection());
    }
    let call = CallContext {
        deadline_ms: options
            .deadline
            .map(|budget| u32::try_from(budget.as_millis()).unwrap_or(u32::MAX)),
        criticality: options.criticality,
        reserve: counters.reserve_for(options, admission),
    };
    match start_admission(admission, deadline, options, &counters.lifecycle) {
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
    lifecycle: &Rc<Lifecycle>,
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
        Poll::Pending => Ok(Admitting::Waiting(admit, Cleared::new(lifecycle))),
    }
}

/// Finishes admission, giving up when `signal` aborts or `clearQueue()` is
/// called; a refusal is `caller`'s error. The permit comes back as a lease
/// of `counters`' lifecycle, which a waiter leaving unadmitted tells too.
async fn finish_admission(
    admitting: Admitting,
    signal: Option<AbortSignal>,
    caller: &Caller,
    counters: &CallCounters,
) -> Result<Lease, JsValue> {
    let (admit, cleared) = match admitting {
        Admitting::Admitted(permit) => return Ok(counters.lease(permit)),
        Admitting::Waiting(admit, cleared) => (RemoteWake::new(admit), cleared),
    };
    let waiting = Wait {
        admit,
        cleared,
        aborted: signal.map(|signal| Box::new(Aborted::new(signal))),
        caller,
    };
    // (`Wait<&Caller>`: the caller's place is used again after the wait.)
    // The wait is dropped at the end of this statement: the queue has let
    // go of the call when the lifecycle looks.
    let waited = waiting.await;
    match waited {
        Ok(permit) => Ok(counters.lease(permit)),
        Err(error) => {
            counters.lifecycle.check();
            Err(error)
        }
    }
}

/// A queued call's wait: the abort first, then a clear, then the admission
/// (one `poll` for `run` and `fetch`). `C` is the caller's place, borrowed
/// or owned (`Caller` or `&Caller`).
struct Wait<C> {
    admit: RemoteWake<Admit<JsClock>>,
    cleared: Cleared,
    /// Boxed: 4 bytes instead of 20 in every queued call's future, most of
    /// which have no signal (benches/node/memory.mjs).
    aborted: Option<Box<Aborted>>,
    caller: C,
}

impl Wait<Caller> {
    /// The wait of a call that `admitting` says is queued, with no signal
    /// to race; a call admitted after all gives its permit back instead
    /// (the `Err` side, to be used at once).
    fn queued(admitting: Admitting, caller: Caller) -> Result<Self, Permit> {
        match admitting {
            Admitting::Admitted(permit) => Err(permit),
            Admitting::Waiting(admit, cleared) => Ok(Self {
                admit: RemoteWake::new(admit),
                cleared,
                aborted: None,
                caller,
            }),
        }
    }
}

impl<C: Borrow<Caller> + Unpin> Future for Wait<C> {
    type Output = Result<Permit, JsValue>;

    #[inline(never)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if let Some(aborted) = &mut this.aborted {
            if let Poll::Ready(reason) = Pin::new(&mut **aborted).poll(cx) {
                return Poll::Ready(Err(reason));
            }
        }
        if Pin::new(&mut this.cleared).poll(cx).is_ready() {
            return Poll::Ready(Err(this.caller.borrow().cleared()));
        }
        let caller = this.caller.borrow();
        Pin::new(&mut this.admit)
            .poll(cx)
            .map(|admitted| admitted.map_err(|error| caller.error(error)))
    }
}

/// The caller gave up on running work (deadline, abort): `permit` stays held
/// until `work` (a promise or value) settles, and the call is counted.
fn abandon(permit: Lease, work: &JsValue, counters: &CallCounters) {
    CallCounters::bump(&counters.abandoned);
    edgeshed_wasm::held::hold_until_settled(permit, work);
}
