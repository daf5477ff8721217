//! Outside workerd, woken tasks wait in one run queue drained in a
//! microtask: no promise per wake.

use super::guard::guard;
use super::step::step;
use crate::host::js::queue_microtask;
use core::cell::RefCell;
use std::collections::VecDeque;
use wasm_bindgen::prelude::*;

/// The queue: tasks to step, in wake order (a continuation outside workerd
/// runs wherever it is delivered, so nothing ties a step to its promise).
#[derive(Default)]
struct RunQueue {
    ids: VecDeque<u64>,
    /// A microtask to drain the queue is pending.
    draining: bool,
}

thread_local! {
    static RUN_QUEUE: RefCell<RunQueue> = RefCell::new(RunQueue::default());
    static DRAIN: Closure<dyn FnMut(JsValue)> = Closure::new(|_: JsValue| drain());
    static DRAIN_JS: js_sys::Function = DRAIN.with(|drain| guard(drain.as_ref(), "run queue"));
}

/// Queues task `id` for a step in the next drain.
pub(super) fn schedule(id: u64) {
    RUN_QUEUE.with(|queue| queue.borrow_mut().ids.push_back(id));
    resume_draining();
}

/// Steps every task queued so far (tasks woken meanwhile wait for the next
/// drain, so that a task waking itself cannot starve the event loop). Ids
/// are taken one at a time: if a step unwinds, the rest stay queued for the
/// recovery (`guard`) to drain.
fn drain() {
    let pending = RUN_QUEUE.with(|queue| {
        let mut queue = queue.borrow_mut();
        queue.draining = false;
        queue.ids.len()
    });
    for _ in 0..pending {
        let Some(id) = RUN_QUEUE.with(|queue| queue.borrow_mut().ids.pop_front()) else {
            break;
        };
        step(id);
    }
}

/// Schedules a drain if tasks wait in the run queue and none is pending.
pub(super) fn resume_draining() {
    let start = RUN_QUEUE.with(|queue| {
        let mut queue = queue.borrow_mut();
        !queue.ids.is_empty() && !core::mem::replace(&mut queue.draining, true)
    });
    if start {
        DRAIN_JS.with(queue_microtask);
    }
}
