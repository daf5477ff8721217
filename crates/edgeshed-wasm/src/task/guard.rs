//! The executor's safety net: every callback into wasm that steps tasks is
//! wrapped so that a JavaScript exception unwinding through a poll fails
//! the tasks it unwound instead of leaving them hanging.

use super::registry::{Task, CURRENT, TASKS};
use super::run_queue::resume_draining;
use super::step::STEP;
use super::wake::REMOTE_STEP;
use crate::host::js::guarded;
use wasm_bindgen::prelude::*;

thread_local! {
    /// Tasks lost to an exception that unwound through their poll.
    static LOST_TASKS: core::cell::Cell<u64> = const { core::cell::Cell::new(0) };
    /// Runs after a guarded callback caught an exception.
    static RECOVER: Closure<dyn FnMut()> = Closure::new(recover_after_throw);
    /// `STEP` after a local wake, guarded.
    pub(super) static STEP_JS: js_sys::Function = guard_step("local wake");
    /// `STEP` in the timer armed by `REMOTE_STEP`, guarded.
    pub(super) static STEP_TIMER_JS: js_sys::Function = guard_step("remote wake timer");
    /// `REMOTE_STEP`, guarded.
    pub(super) static REMOTE_STEP_JS: js_sys::Function =
        REMOTE_STEP.with(|step| guard(step.as_ref(), "remote wake"));
}

fn guard_step(label: &str) -> js_sys::Function {
    STEP.with(|step| guard(step.as_ref(), label))
}

/// Wraps a callback of the executor (or its timers) so that an exception
/// thrown through it is logged and the tasks it unwound are failed (see
/// [`recover_after_throw`]) instead of hanging for ever.
pub(crate) fn guard(callback: &JsValue, label: &str) -> js_sys::Function {
    RECOVER.with(|recover| guarded(callback, label, recover.as_ref()))
}

/// Cleans up after an exception unwound through a poll. No Rust frame runs
/// below a guarded callback, so every task still marked as being polled was
/// unwound: its future (and whatever permits it held) is gone for good, and
/// its promise would never settle. It is rejected instead, so that the
/// caller (or the request) at least gets an answer, and counted.
fn recover_after_throw() {
    CURRENT.with(|current| current.set(None));
    // A drain cut short by the exception leaves the rest of its tasks queued
    // (workerd steps by promise: its run queue stays empty).
    resume_draining();
    let lost: Vec<Task> = TASKS.with(|tasks| tasks.borrow_mut().take_where(|task| task.polling));
    LOST_TASKS.with(|count| count.set(count.get() + lost.len() as u64));
    for task in lost {
        let error = js_sys::Error::new("edgeshed: an exception unwound through this task");
        let _ = task.reject.call1(&JsValue::UNDEFINED, &error);
    }
}

/// Tasks lost so far to an exception that unwound through their poll.
pub fn lost_tasks() -> u64 {
    LOST_TASKS.with(core::cell::Cell::get)
}
