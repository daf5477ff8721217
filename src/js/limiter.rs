//! The `Limiter` class exported to JavaScript.

use super::abort::Aborted;
use super::clock::JsClock;
use super::counters::CallCounters;
use super::errors::{admit_error, deadline as deadline_error, type_error};
use super::fetch::{global_fetch, with_signal};
use super::options::{call_options, limiter_options, CallOptions};
use super::race::{first, First};
use super::settled::Settled;
use super::task::{spawn, RemoteWake};
use crate::admission::{Admission, Admit};
use crate::semaphore::Permit;
use crate::time::{Clock, Instant};
use core::future::{Future, Pending};
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{AbortController, AbortSignal};

/// Admission control for JavaScript callers (the npm package's `Limiter`).
/// Its TypeScript declarations are in `typescript.rs`.
#[wasm_bindgen(skip_typescript)]
pub struct Limiter {
    admission: Admission<JsClock>,
    /// Counters kept by the JS face (not by the core's `Admission`).
    counters: Rc<CallCounters>,
}

#[wasm_bindgen]
impl Limiter {
    /// `new Limiter({ maxInFlight, maxQueue, queueTimeoutMs, bodyTimeoutMs })`;
    /// throws a `TypeError`/`RangeError` naming the invalid option.
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue) -> Result<Limiter, JsValue> {
        let options = limiter_options(&options)?;
        Ok(Self {
            admission: Admission::new(options.max_in_flight, options.policy, JsClock),
            counters: Rc::new(CallCounters::new(options.body_timeout_ms)),
        })
    }

    /// Runs `task` once admitted; see the TypeScript declaration.
    pub fn run(&self, task: JsValue, options: JsValue) -> js_sys::Promise {
        self.counters.bodies.sweep();
        run(&self.admission, task, options)
    }

    /// `fetch` under the limit, holding the slot until the body is done.
    pub fn fetch(&self, input: JsValue, init: JsValue) -> js_sys::Promise {
        self.counters.bodies.sweep();
        fetch(&self.admission, &self.counters, input, init)
    }

    /// `{ inFlight, queued, admitted, shed, queueTimeouts, expired,
    /// abandoned, heldBodies, bodyTimeouts, limit }`.
    pub fn stats(&self) -> JsValue {
        let bodies = &self.counters.bodies;
        bodies.sweep();
        let stats = self.admission.stats();
        let object = js_sys::Object::new();
        let fields: [(&str, f64); 10] = [
            ("inFlight", stats.in_flight as f64),
            ("queued", stats.queued as f64),
            ("admitted", stats.admitted as f64),
            ("shed", stats.shed as f64),
            ("queueTimeouts", stats.queue_timeouts as f64),
            ("expired", stats.expired as f64),
            ("abandoned", self.counters.abandoned.get() as f64),
            ("heldBodies", bodies.held_bodies()),
            ("bodyTimeouts", bodies.body_timeouts()),
            ("limit", stats.limit as f64),
        ];
        for (key, value) in fields {
            let _ = js_sys::Reflect::set(&object, &key.into(), &value.into());
        }
        object.into()
    }
}

/// The absolute deadline of a call that starts now.
fn deadline_of(options: &CallOptions) -> Option<Instant> {
    options.deadline.map(|budget| JsClock.now() + budget)
}

/// A call's admission, started synchronously when the call is made so that
/// stats, FIFO order and immediate rejections reflect the call at once.
enum Admitting {
    Admitted(Permit),
    /// `Admit` is `Unpin`: it can move into the task after this first poll.
    Waiting(Admit<JsClock>),
}

/// Decides admission now: admitted, queued (keeps its place), or refused.
fn start_admission(
    admission: &Admission<JsClock>,
    deadline: Option<Instant>,
    signal: Option<&AbortSignal>,
) -> Result<Admitting, JsValue> {
    if let Some(signal) = signal {
        if signal.aborted() {
            return Err(signal.reason());
        }
    }
    // The common case first: a free slot, taken without a future.
    if deadline.is_none() {
        if let Some(permit) = admission.try_admit() {
            return Ok(Admitting::Admitted(permit));
        }
    }
    let mut admit = match deadline {
        Some(at) => admission.admit_before(at),
        None => admission.admit(),
    };
    // Polled once with a no-op waker to take a permit or a queue place right
    // away; the async part polls again with its real waker before waiting.
    match Pin::new(&mut admit).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(Ok(permit)) => Ok(Admitting::Admitted(permit)),
        Poll::Ready(Err(error)) => Err(admit_error(error)),
        Poll::Pending => Ok(Admitting::Waiting(admit)),
    }
}

/// Finishes admission, giving up when `signal` aborts.
async fn finish_admission(
    admitting: Admitting,
    signal: Option<AbortSignal>,
) -> Result<Permit, JsValue> {
    let admit = match admitting {
        Admitting::Admitted(permit) => return Ok(permit),
        Admitting::Waiting(admit) => admit,
    };
    match first(
        RemoteWake::new(admit),
        None::<Pending<()>>,
        signal.map(Aborted::new),
    )
    .await
    {
        First::Work(Ok(permit)) => Ok(permit),
        First::Work(Err(error)) => Err(admit_error(error)),
        First::Abort(reason) => Err(reason),
        First::Deadline(()) => Err(deadline_error()),
    }
}

/// Runs the synchronous part of a call; its errors become a rejected promise.
fn promise_of<F>(start: impl FnOnce() -> Result<F, JsValue>) -> js_sys::Promise
where
    F: Future<Output = Result<JsValue, JsValue>> + 'static,
{
    match start() {
        Ok(work) => spawn(work),
        Err(error) => js_sys::Promise::reject(&error),
    }
}

fn run(admission: &Admission<JsClock>, task: JsValue, options: JsValue) -> js_sys::Promise {
    let started = (|| {
        let task: js_sys::Function = task
            .dyn_into()
            .map_err(|_| type_error("fn must be a function"))?;
        let options = call_options(&options, "options", true)?;
        let deadline = deadline_of(&options);
        let admitting = start_admission(admission, deadline, options.signal.as_ref())?;
        Ok::<_, JsValue>((task, options, deadline, admitting))
    })();
    let (task, options, deadline, admitting) = match started {
        Ok(started) => started,
        Err(error) => return js_sys::Promise::reject(&error),
    };
    match admitting {
        // The common case, admitted at once with nothing to race: no task,
        // no executor.
        Admitting::Admitted(permit) if deadline.is_none() && options.signal.is_none() => {
            call_holding(&task, permit)
        }
        admitting => spawn(run_admitting(task, options, deadline, admitting)),
    }
}

/// Like [`call_holding`], settling the caller's promise through `resolve`
/// and `reject` directly.
fn call_settling(
    task: &js_sys::Function,
    permit: Permit,
    resolve: &js_sys::Function,
    reject: &js_sys::Function,
) {
    match task.call0(&JsValue::UNDEFINED) {
        Ok(returned) => {
            let id = super::held::hold(permit);
            super::held::with_release(|release| {
                settle_holding(&returned, id, release, resolve, reject)
            });
        }
        Err(thrown) => {
            drop(permit);
            let _ = reject.call1(&JsValue::UNDEFINED, &thrown);
        }
    }
}

/// Calls `task` with nothing to race: `permit` rides on the settlement of
/// what it returns (and goes back at once if it throws).
fn call_holding(task: &js_sys::Function, permit: Permit) -> js_sys::Promise {
    match task.call0(&JsValue::UNDEFINED) {
        Ok(returned) => {
            let id = super::held::hold(permit);
            super::held::with_release(|release| release_when_settled(&returned, id, release))
        }
        Err(thrown) => {
            drop(permit);
            js_sys::Promise::reject(&thrown)
        }
    }
}

#[wasm_bindgen(module = "/src/js/glue.js")]
extern "C" {
    /// `Promise.resolve(value).finally(() => release(id))`; `release(id)`
    /// runs at once and the promise rejects if `Promise.resolve` throws.
    #[wasm_bindgen(js_name = releaseWhenSettled)]
    fn release_when_settled(value: &JsValue, id: u32, release: &JsValue) -> js_sys::Promise;
    /// Once `value` settles: `release(id)`, then `resolve` or `reject` with
    /// its outcome (at once, rejecting, if `Promise.resolve` throws).
    #[wasm_bindgen(js_name = settleHolding)]
    fn settle_holding(
        value: &JsValue,
        id: u32,
        release: &JsValue,
        resolve: &js_sys::Function,
        reject: &js_sys::Function,
    );
}

/// `run` for a call that waits for admission, or races a deadline or signal.
async fn run_admitting(
    task: js_sys::Function,
    options: CallOptions,
    deadline: Option<Instant>,
    admitting: Admitting,
) -> Result<JsValue, JsValue> {
    let permit = finish_admission(admitting, options.signal.clone()).await?;
    if deadline.is_none() && options.signal.is_none() {
        // Nothing to race once admitted: the task ends here, and the call's
        // settlement settles its promise and returns the permit.
        return Ok(match super::task::hand_over_settlement() {
            Some((resolve, reject)) => {
                call_settling(&task, permit, &resolve, &reject);
                JsValue::UNDEFINED
            }
            None => call_holding(&task, permit).into(),
        });
    }
    // The task's own signal, aborted at the deadline or with the caller's signal.
    let controller = AbortController::new()?;
    let returned = task.call1(&JsValue::UNDEFINED, &controller.signal())?;
    let work = Settled::new(&returned);
    let outcome = first(
        work,
        deadline.map(|at| JsClock.sleep_until(at)),
        options.signal.map(Aborted::new),
    )
    .await;
    drop(permit);
    let error = match outcome {
        First::Work(result) => return result,
        First::Deadline(()) => deadline_error(),
        First::Abort(reason) => reason,
    };
    controller.abort_with_reason(&error);
    Err(error)
}

fn fetch(
    admission: &Admission<JsClock>,
    counters: &Rc<CallCounters>,
    input: JsValue,
    init: JsValue,
) -> js_sys::Promise {
    let counters = Rc::clone(counters);
    promise_of(|| {
        let options = call_options(&init, "init", false)?;
        let deadline = deadline_of(&options);
        let admitting = start_admission(admission, deadline, options.signal.as_ref())?;
        Ok(async move {
            let permit = finish_admission(admitting, options.signal).await?;
            let controller = deadline.map(|_| AbortController::new()).transpose()?;
            let init = match &controller {
                Some(controller) => with_signal(&init, &controller.signal())?,
                None => init,
            };
            let headers = Settled::new(&global_fetch(&input, &init)?);
            let timer = deadline.map(|at| JsClock.sleep_until(at));
            match first(headers, timer, None::<Pending<JsValue>>).await {
                First::Work(Ok(response)) => counters.bodies.hold(&response, permit),
                First::Work(Err(error)) | First::Abort(error) => Err(error),
                First::Deadline(()) => {
                    let error = deadline_error();
                    if let Some(controller) = controller {
                        controller.abort_with_reason(&error);
                    }
                    Err(error)
                }
            }
        })
    })
}
