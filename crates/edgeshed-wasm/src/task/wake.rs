//! Wakes: how a woken task gets its next step (a promise of its own in
//! workerd, the run queue elsewhere).

use super::guard::{REMOTE_STEP_JS, STEP_JS, STEP_TIMER_JS};
use super::host::per_request_host;
use super::registry::{with_task, TASKS};
use super::run_queue::schedule;
use super::step::step;
use crate::host::js::{set_timeout, then_call};
use crate::id_map::{id_from_js, id_to_js};
use wasm_bindgen::prelude::*;

thread_local! {
    /// The continuation of a wake that may come from another request: it
    /// runs in this task's context, but as a reaction workerd delivers
    /// between events, where I/O started (a fetch) is not counted as the
    /// request's pending work — the request can then be cancelled as hung.
    /// So it only arms a zero-delay timer, and the step runs in that timer's
    /// event, like any other work of the request.
    pub(super) static REMOTE_STEP: Closure<dyn FnMut(JsValue)> = Closure::new(|id: JsValue| {
        let armed = STEP_TIMER_JS.with(|step| set_timeout(step, 0.0, &id).is_ok());
        if !armed {
            // The host refused a timer: step here rather than never.
            if let Some(id) = id.as_f64().and_then(id_from_js) {
                step(id);
            }
        }
    });
}

/// How a woken task gets its next step.
enum NextStep {
    /// Resolve this promise of the task's own (workerd).
    Resolve(js_sys::Function),
    /// Through the run queue (elsewhere).
    Queue,
}

/// Arranges the next step of task `id` (`remote`: the wake may come from
/// another request).
pub(super) fn wake_task(id: u64, remote: bool) {
    // (The worker build serves workerd only: no run queue compiled in.)
    let queue = !per_request_host();
    let next = TASKS.with(|tasks| {
        let mut tasks = tasks.borrow_mut();
        let task = tasks.get_mut(id)?;
        if task.polling {
            task.woken = true;
            return None;
        }
        if queue {
            return (!core::mem::replace(&mut task.scheduled, true)).then_some(NextStep::Queue);
        }
        // A remote wake of a step that made no remote promise (it cannot
        // happen: see `uses_remote`) still resumes the task, locally.
        let resolve = if remote {
            task.wake_remote.clone().or_else(|| task.wake_local.clone())
        } else {
            task.wake_local.clone()
        };
        resolve.map(NextStep::Resolve)
    });
    match next {
        Some(NextStep::Resolve(resolve)) => {
            let _ = resolve.call1(&JsValue::UNDEFINED, &JsValue::from(id_to_js(id)));
        }
        Some(NextStep::Queue) => schedule(id),
        None => {}
    }
}

/// After a step left task `id` waiting: in workerd, makes the promises
/// whose continuation is its next step (made here, in the task's own turn,
/// so that the next step runs there too). `woken`: it was woken on the last
/// poll allowed in one step, so it yields and goes on at once.
pub(super) fn arm_next_step(id: u64, uses_remote: bool, woken: bool) {
    if per_request_host() {
        let wake_remote = uses_remote.then(next_remote_step_promise).flatten();
        let wake_local = next_step_promise();
        with_task(id, |task| {
            task.wake_local = wake_local;
            task.wake_remote = wake_remote;
        });
    }
    if woken {
        wake_task(id, false);
    }
}

/// A promise whose settlement runs the next step; returns its resolver.
fn next_step_promise() -> Option<js_sys::Function> {
    STEP_JS.with(promise_calling)
}

/// Like [`next_step_promise`], for wakes from other requests: the step runs
/// in a timer of this task's own (see `REMOTE_STEP`).
fn next_remote_step_promise() -> Option<js_sys::Function> {
    REMOTE_STEP_JS.with(promise_calling)
}

/// A fresh promise whose settlement calls `callback`; returns its resolver.
fn promise_calling(callback: &js_sys::Function) -> Option<js_sys::Function> {
    let mut resolver = None;
    let promise = js_sys::Promise::new(&mut |resolve, _reject| resolver = Some(resolve));
    then_call(&promise, callback);
    resolver
}
