//! `Limiter.run(fn, { signal, deadlineMs })`.

use super::{abandon, begin, deadline_of, finish_admission, Admitting, Wait};
use crate::counters::CallCounters;
use crate::errors::{type_error, Caller};
use crate::host::{release_when_settled, settle_holding};
use crate::options::{call_options, CallOptions};
use crate::sampling::{ending_of, Running};
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use edgeshed::admission::Admission;
use edgeshed::limit::adaptive::Ending;
use edgeshed::time::{Clock, Instant};
use edgeshed_wasm::abort::Aborted;
use edgeshed_wasm::clock::JsClock;
use edgeshed_wasm::race::or_never;
use edgeshed_wasm::settled::Settled;
use edgeshed_wasm::task::{hand_over_settlement, spawn};
use futures_util::future::{select, Either};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::AbortController;

/// `limiter.run(task, options)`.
pub(crate) fn run(
    admission: &Admission<JsClock>,
    counters: &Rc<CallCounters>,
    task: JsValue,
    options: JsValue,
) -> js_sys::Promise {
    let started = (|| {
        let task: js_sys::Function = task
            .dyn_into()
            .map_err(|_| type_error("fn must be a function"))?;
        let options = call_options(&options, true)?;
        let deadline = deadline_of(&options);
        Ok::<_, JsValue>((task, options, deadline))
    })();
    let (task, mut options, deadline) = match started {
        Ok(started) => started,
        Err(error) => return js_sys::Promise::reject(&error),
    };
    let (call, admitting) = match begin(counters, admission, deadline, &mut options) {
        Ok(begun) => begun,
        Err(rejection) => return rejection,
    };
    match admitting {
        // The common case, admitted at once with nothing to race: no task,
        // no executor.
        Admitting::Admitted(permit) if deadline.is_none() && options.signal.is_none() => {
            call_holding(
                &task,
                Running::new(counters.lease(permit), counters.sampler.as_ref()),
            )
        }
        // Waiting with nothing to race: the smaller task (its future is
        // kept for every queued call; the racing one is several times it).
        admitting if deadline.is_none() && options.signal.is_none() => {
            let caller = admitting.caller(call, admission);
            match Wait::queued(admitting, caller) {
                Ok(wait) => spawn(QueuedRun {
                    task,
                    wait: Some(wait),
                    counters: Rc::clone(counters),
                }),
                Err(permit) => call_holding(
                    &task,
                    Running::new(counters.lease(permit), counters.sampler.as_ref()),
                ),
            }
        }
        admitting => {
            let caller = admitting.caller(call, admission);
            spawn(run_admitting(
                task,
                options,
                deadline,
                (admitting, caller),
                Rc::clone(counters),
            ))
        }
    }
}

/// Like [`call_holding`], settling the caller's promise through `resolve`
/// and `reject` directly.
fn call_settling(
    task: &js_sys::Function,
    running: Running,
    resolve: &js_sys::Function,
    reject: &js_sys::Function,
) {
    match task.call0(&JsValue::UNDEFINED) {
        Ok(returned) if is_plain(&returned) => {
            drop(running.sample(|| Ending::Completed));
            let _ = resolve.call1(&JsValue::UNDEFINED, &returned);
        }
        Ok(returned) => {
            running.hand_over(|id, release| settle_holding(&returned, id, release, resolve, reject))
        }
        Err(thrown) => {
            drop(running.sample(|| ending_of(&thrown)));
            let _ = reject.call1(&JsValue::UNDEFINED, &thrown);
        }
    }
}

/// Whether `value` is settled as it is: neither an object nor a function, so
/// it cannot be a thenable (`Promise.resolve` fulfils with it at once).
fn is_plain(value: &JsValue) -> bool {
    !value.is_object() && !value.is_function()
}

/// Calls `task` with nothing to race: the call's permit (and its sample)
/// rides on the settlement of what it returns (and ends at once if it throws,
/// or returns a value that is no thenable).
fn call_holding(task: &js_sys::Function, running: Running) -> js_sys::Promise {
    match task.call0(&JsValue::UNDEFINED) {
        // A synchronous result: the work is done, its slot free now.
        Ok(returned) if is_plain(&returned) => {
            drop(running.sample(|| Ending::Completed));
            js_sys::Promise::resolve(&returned)
        }
        Ok(returned) => {
            running.hand_over(|id, release| release_when_settled(&returned, id, release))
        }
        Err(thrown) => {
            drop(running.sample(|| ending_of(&thrown)));
            js_sys::Promise::reject(&thrown)
        }
    }
}

/// `run` for a call that waits for admission with neither a deadline nor a
/// signal: once admitted there is nothing to race, so the task ends there,
/// and the call's settlement settles its promise and returns the permit.
///
/// By hand rather than an `async fn` around `finish_admission`: the nested
/// futures kept copies of their arguments, 808 B for every queued call
/// (1,232 B of wasm memory per queued waiter, benches/node/memory.mjs).
struct QueuedRun {
    task: js_sys::Function,
    /// `None` once the wait is over (it leaves the queue before the
    /// lifecycle looks, as `finish_admission` does).
    wait: Option<Wait<Caller>>,
    counters: Rc<CallCounters>,
}

impl Future for QueuedRun {
    type Output = Result<JsValue, JsValue>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let Some(wait) = &mut this.wait else {
            // Polled after completion: nothing left to do.
            return Poll::Ready(Ok(JsValue::UNDEFINED));
        };
        let waited = std::task::ready!(Pin::new(wait).poll(cx));
        this.wait = None;
        let counters = &this.counters;
        let permit = match waited {
            Ok(permit) => counters.lease(permit),
            Err(error) => {
                counters.lifecycle.check();
                return Poll::Ready(Err(error));
            }
        };
        let running = Running::new(permit, counters.sampler.as_ref());
        Poll::Ready(Ok(match hand_over_settlement() {
            Some((resolve, reject)) => {
                call_settling(&this.task, running, &resolve, &reject);
                JsValue::UNDEFINED
            }
            None => call_holding(&this.task, running).into(),
        }))
    }
}

/// `run` for a call that races a deadline or a signal (waiting for
/// admission first, or admitted at once).
async fn run_admitting(
    task: js_sys::Function,
    options: CallOptions,
    deadline: Option<Instant>,
    (admitting, caller): (Admitting, Caller),
    counters: Rc<CallCounters>,
) -> Result<JsValue, JsValue> {
    let permit = finish_admission(admitting, options.signal.clone(), &caller, &counters).await?;
    let running = Running::new(permit, counters.sampler.as_ref());
    // The task's own signal, aborted at the deadline or with the caller's signal.
    let controller = AbortController::new()?;
    let returned = match task.call1(&JsValue::UNDEFINED, &controller.signal()) {
        Ok(returned) => returned,
        Err(thrown) => {
            drop(running.sample(|| ending_of(&thrown)));
            return Err(thrown);
        }
    };
    let abort = or_never(options.signal.map(Aborted::new));
    let timer = or_never(deadline.map(|at| JsClock.sleep_until(at)));
    // The abort first, then the work, then the deadline.
    let (error, permit) = match select(select(abort, Settled::new(&returned)), timer).await {
        Either::Left((Either::Right((result, _)), _)) => {
            let ending = match &result {
                Ok(_) => Ending::Completed,
                Err(reason) => ending_of(reason),
            };
            drop(running.sample(|| ending));
            return result;
        }
        // The caller gave up: ignored (see sampling.rs).
        Either::Left((Either::Left((reason, _)), _)) => {
            (reason, running.sample(|| Ending::Aborted))
        }
        Either::Right(((), _)) => {
            CallCounters::bump(&counters.expired_running);
            // The caller's deadline: ignored; its slot freed later.
            (
                caller.expired(true),
                running.sample(|| Ending::DeadlinePassed),
            )
        }
    };
    controller.abort_with_reason(&error);
    abandon(permit, &returned, &counters);
    Err(error)
}
