//! The step loop: one step polls a task until it is pending (or done), at
//! most a bounded number of times in a row.

use super::registry::{with_task, Begin, CURRENT, TASKS};
use super::wake::arm_next_step;
use super::waker::replace_asked_remote;
use crate::host::js::in_own_context;
use crate::id_map::id_from_js;
use core::task::{Context, Poll};
use wasm_bindgen::prelude::*;

/// The most polls in a row when a task keeps waking itself; after that it
/// yields to the event loop through its promise.
const MAX_POLLS_PER_STEP: usize = 32;

thread_local! {
    /// Steps skipped because they were delivered in another request's turn.
    static FOREIGN_STEPS: core::cell::Cell<u64> = const { core::cell::Cell::new(0) };
    /// The one continuation shared by all tasks: called with a task id.
    pub(super) static STEP: Closure<dyn FnMut(JsValue)> = Closure::new(|id: JsValue| {
        if let Some(id) = id.as_f64().and_then(id_from_js) {
            step(id);
        }
    });
}

/// Polls task `id` once, in the current context.
pub(super) fn step(id: u64) {
    let mut begin = with_task(id, |task| task.begin(true)).flatten();
    if let Some(Begin::Probe(probe)) = &begin {
        if !in_own_context(probe) {
            FOREIGN_STEPS.with(|count| count.set(count.get() + 1));
            return;
        }
        begin = with_task(id, |task| task.begin(false)).flatten();
    }
    let Some(Begin::Run(mut future, waker)) = begin else {
        return;
    };
    let previous = CURRENT.with(|current| current.replace(Some(id)));
    // A step may run inside another task's poll (a nested spawn): that
    // task's flag is restored when this step ends.
    let outer_asked_remote = replace_asked_remote(false);
    let mut polls = 1;
    let outcome = loop {
        let polled = future.as_mut().poll(&mut Context::from_waker(&waker));
        let asked_remote = replace_asked_remote(false);
        if let Poll::Ready(result) = polled {
            break Some(result);
        }
        // Pending: poll again at once if woken meanwhile, else park the
        // future in the task (one lookup either way).
        let mut parked = Some(future);
        let next = with_task(id, |task| {
            task.uses_remote |= asked_remote;
            let woken = core::mem::take(&mut task.woken);
            if woken && polls < MAX_POLLS_PER_STEP {
                return None;
            }
            task.polling = false;
            task.future = parked.take();
            Some((task.uses_remote, woken))
        });
        match (next, parked.take()) {
            // Woken during the poll: again.
            (Some(None), Some(again)) => {
                future = again;
                polls += 1;
            }
            (Some(Some((uses_remote, woken))), _) => {
                CURRENT.with(|current| current.set(previous));
                replace_asked_remote(outer_asked_remote);
                arm_next_step(id, uses_remote, woken);
                return;
            }
            // The task is gone (reclaimed meanwhile): drop the future.
            _ => break None,
        }
    };
    CURRENT.with(|current| current.set(previous));
    replace_asked_remote(outer_asked_remote);
    let Some(result) = outcome else {
        return;
    };
    if let Some(task) = TASKS.with(|tasks| tasks.borrow_mut().remove(id)) {
        if task.handed_over {
            return;
        }
        let _ = match result {
            Ok(value) => task.resolve.call1(&JsValue::UNDEFINED, &value),
            Err(error) => task.reject.call1(&JsValue::UNDEFINED, &error),
        };
    }
}

/// Steps skipped so far because workerd delivered them in another request's
/// turn (see [`spawn_for_request`](super::spawn_for_request)).
pub fn foreign_steps() -> u64 {
    FOREIGN_STEPS.with(core::cell::Cell::get)
}
