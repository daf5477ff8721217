//! The JavaScript [`Runtime`]: the executor's one [`Executor`] value, the
//! callbacks JavaScript calls into it (each guarded), and in workerd the
//! promises whose continuations are the next steps.

use crate::host::js::{guarded, in_own_context, queue_microtask, set_timeout, then_call};
use crate::id_map::{id_from_js, id_to_js};
use crate::task::executor::Executor;
use crate::task::host::per_request_host;
use crate::task::runtime::Runtime;
use crate::task::step::{drain, resume_draining, step};
use wasm_bindgen::prelude::*;

/// A task's result, as its promise settles.
pub(super) type Output = Result<JsValue, JsValue>;

/// What the JavaScript runtime keeps per task.
pub(super) struct JsIo {
    /// Its promise is settled by someone else (see `hand_over_settlement`):
    /// the task's own result is ignored.
    pub(super) handed_over: bool,
    pub(super) resolve: js_sys::Function,
    pub(super) reject: js_sys::Function,
    /// Resolves the promise of the next step, for wakes from this request.
    pub(super) wake_local: Option<js_sys::Function>,
    /// Resolves the other promise of the next step, for wakes that may come
    /// from another request.
    pub(super) wake_remote: Option<js_sys::Function>,
    /// An object of the task's own request that the host refuses to read
    /// from any other request's turn (see `spawn_for_request`).
    pub(super) context_probe: Option<JsValue>,
}

/// The JavaScript runtime.
pub(super) struct Js;

thread_local! {
    /// The executor's whole state.
    pub(super) static EXECUTOR: Executor<JsIo, Output> = Executor::default();
    /// The one continuation shared by all tasks: called with a task id.
    static STEP: Closure<dyn FnMut(JsValue)> = Closure::new(|id: JsValue| {
        if let Some(id) = id.as_f64().and_then(id_from_js) {
            step::<Js>(id);
        }
    });
    /// The continuation of a wake that may come from another request: it
    /// runs in this task's context, but as a reaction workerd delivers
    /// between events, where I/O started (a fetch) is not counted as the
    /// request's pending work — the request can then be cancelled as hung.
    /// So it only arms a zero-delay timer, and the step runs in that timer's
    /// event, like any other work of the request.
    static REMOTE_STEP: Closure<dyn FnMut(JsValue)> = Closure::new(|id: JsValue| {
        let armed = STEP_TIMER_JS.with(|step| set_timeout(step, 0.0, &id).is_ok());
        if !armed {
            // The host refused a timer: step here rather than never.
            if let Some(id) = id.as_f64().and_then(id_from_js) {
                step::<Js>(id);
            }
        }
    });
    static DRAIN: Closure<dyn FnMut(JsValue)> = Closure::new(|_: JsValue| drain::<Js>());
    /// Runs after a guarded callback caught an exception.
    static RECOVER: Closure<dyn FnMut()> = Closure::new(recover_after_throw);
    /// `STEP` after a local wake, guarded.
    static STEP_JS: js_sys::Function = STEP.with(|step| guard(step.as_ref(), "local wake"));
    /// `STEP` in the timer armed by `REMOTE_STEP`, guarded.
    static STEP_TIMER_JS: js_sys::Function =
        STEP.with(|step| guard(step.as_ref(), "remote wake timer"));
    /// `REMOTE_STEP`, guarded.
    static REMOTE_STEP_JS: js_sys::Function =
        REMOTE_STEP.with(|step| guard(step.as_ref(), "remote wake"));
    /// `DRAIN`, guarded.
    static DRAIN_JS: js_sys::Function = DRAIN.with(|drain| guard(drain.as_ref(), "run queue"));
}

impl Runtime for Js {
    type Output = Output;
    type Io = JsIo;
    type Resume = js_sys::Function;
    type Probe = JsValue;

    fn with<T>(f: impl FnOnce(&Executor<JsIo, Output>) -> T) -> T {
        EXECUTOR.with(f)
    }

    fn run_queue() -> bool {
        // (The worker build serves workerd only: no run queue compiled in.)
        !per_request_host()
    }

    fn schedule_drain() {
        DRAIN_JS.with(queue_microtask);
    }

    fn resume_of(io: &JsIo, remote: bool) -> Option<js_sys::Function> {
        // A remote wake of a step that made no remote promise (it cannot
        // happen: see `uses_remote`) still resumes the task, locally.
        if remote {
            io.wake_remote.clone().or_else(|| io.wake_local.clone())
        } else {
            io.wake_local.clone()
        }
    }

    fn resume(resolve: js_sys::Function, id: u64) {
        let _ = resolve.call1(&JsValue::UNDEFINED, &JsValue::from(id_to_js(id)));
    }

    fn probe(io: &JsIo) -> Option<JsValue> {
        io.context_probe.clone()
    }

    fn in_own_context(probe: &JsValue) -> bool {
        in_own_context(probe)
    }

    /// In workerd, makes the promises whose continuation is the task's next
    /// step (made here, in the task's own turn, so that the next step runs
    /// there too).
    fn parked(id: u64, uses_remote: bool) {
        if !per_request_host() {
            return;
        }
        let wake_remote = uses_remote
            .then(|| REMOTE_STEP_JS.with(promise_calling))
            .flatten();
        let wake_local = STEP_JS.with(promise_calling);
        EXECUTOR.with(|ex| {
            ex.with_task(id, |task| {
                task.io.wake_local = wake_local;
                task.io.wake_remote = wake_remote;
            })
        });
    }

    fn settle(io: JsIo, output: Output) {
        if io.handed_over {
            return;
        }
        let _ = match output {
            Ok(value) => io.resolve.call1(&JsValue::UNDEFINED, &value),
            Err(error) => io.reject.call1(&JsValue::UNDEFINED, &error),
        };
    }
}

/// A fresh promise whose settlement calls `callback`; returns its resolver.
fn promise_calling(callback: &js_sys::Function) -> Option<js_sys::Function> {
    let mut resolver = None;
    let promise = js_sys::Promise::new(&mut |resolve, _reject| resolver = Some(resolve));
    then_call(&promise, callback);
    resolver
}

/// Wraps a callback of the executor (or its timers) so that an exception
/// thrown through it is logged and the tasks it unwound are failed (see
/// [`recover_after_throw`]) instead of hanging for ever.
pub(crate) fn guard(callback: &JsValue, label: &str) -> js_sys::Function {
    RECOVER.with(|recover| guarded(callback, label, recover.as_ref()))
}

/// Cleans up after an exception unwound through a poll. No Rust frame runs
/// below a guarded callback, so every task still being polled was unwound:
/// its future (and whatever permits it held) is gone for good, and its
/// promise would never settle. It is rejected instead, so that the caller
/// (or the request) at least gets an answer, and counted.
fn recover_after_throw() {
    EXECUTOR.with(|ex| ex.set_current(None));
    // A drain cut short by the exception leaves the rest of its tasks queued
    // (workerd steps by promise: its run queue stays empty).
    resume_draining::<Js>();
    let lost = EXECUTOR.with(Executor::take_unwound);
    for task in lost {
        let error = js_sys::Error::new("edgeshed: an exception unwound through this task");
        let _ = task.io.reject.call1(&JsValue::UNDEFINED, &error);
    }
}
