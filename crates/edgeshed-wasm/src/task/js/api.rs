//! The executor's public face on the JavaScript runtime: spawning,
//! reclaiming, handing a promise's settlement over, and the counters.

use super::runtime::{Js, JsIo, EXECUTOR};
use crate::task::executor::Executor;
use crate::task::state::{Task, TaskFuture};
use crate::task::step::step;
use crate::task::waker::task_waker;
use core::future::Future;
use wasm_bindgen::prelude::*;

/// Runs `future` to completion as a task of the current JavaScript context
/// and returns a promise of its result.
pub fn spawn<F>(future: F) -> js_sys::Promise
where
    F: Future<Output = Result<JsValue, JsValue>> + 'static,
{
    spawn_for_request(future, None, None).promise
}

/// A task spawned by [`spawn_for_request`]: its promise, and whether it
/// already ended in its first step (then nothing needs the request kept
/// alive for it: no `waitUntil`).
pub struct Spawned {
    /// Settles with the task's result.
    pub promise: js_sys::Promise,
    /// The task ended before `spawn_for_request` returned.
    pub ended: bool,
}

/// Like [`spawn`], for the task of one workerd request.
///
/// `lifetime_ms`: the task can never legitimately live longer; once that has
/// passed twice over, [`reclaim_expired`] drops it, returning whatever
/// permits it holds.
///
/// `context_probe`: an object of the request (its `AbortSignal`) whose
/// `aborted` getter throws when read on behalf of another request. Before
/// each step the task checks it: a step that workerd delivers in another
/// request's turn (it happens, rarely, to a wake from another request) is
/// skipped instead of doing the request's I/O there — which would throw
/// through the poll and lose the task with its permits. The task then goes
/// on at its own next event (its queue timeout or deadline timer).
pub fn spawn_for_request<F>(
    future: F,
    lifetime_ms: Option<f64>,
    context_probe: Option<JsValue>,
) -> Spawned
where
    F: Future<Output = Result<JsValue, JsValue>> + 'static,
{
    let expires_at = lifetime_ms.map(|ms| js_sys::Date::now() + 2.0 * ms);
    let mut future = Some(Box::pin(future) as TaskFuture<_>);
    let mut context_probe = context_probe;
    let mut spawned_id = None;
    let promise = js_sys::Promise::new(&mut |resolve, reject| {
        let Some(future) = future.take() else { return };
        let io = JsIo {
            handed_over: false,
            resolve,
            reject,
            wake_local: None,
            wake_remote: None,
            context_probe: context_probe.take(),
        };
        let id = EXECUTOR
            .with(|ex| ex.insert(|id| Task::new(future, io, expires_at, task_waker::<Js>(id))));
        spawned_id = Some(id);
        step::<Js>(id);
    });
    let ended = spawned_id.is_none_or(|id| EXECUTOR.with(|ex| ex.with_task(id, |_| ())).is_none());
    Spawned { promise, ended }
}

/// Drops every task past its `expires_at`, and returns how many.
///
/// workerd cancels a request it believes hung (one whose only pending work is
/// a promise another request resolves — which sustained cross-request
/// hand-offs can provoke) and with it every timer and fetch of that request.
/// Its task then never completes and would keep its permits for ever. A
/// later request reclaims it here: the future is dropped, so its permits go
/// back (waking the next waiters) and its other resources are released.
pub fn reclaim_expired() -> usize {
    // Called on every request: the executor scans its tasks only once the
    // earliest expiry has passed (visiting every live task each time was 9 %
    // of the gateway's CPU on its shed path, benches/e2e/profile.mjs).
    let expired = EXECUTOR.with(|ex| ex.take_expired(js_sys::Date::now()));
    // Dropped outside the borrow: dropping permits wakes other tasks.
    let count = expired.len();
    drop(expired);
    count
}

/// Hands the settlement of the current task's promise to the caller: returns
/// its `resolve` and `reject`, and the task's own result will be ignored.
/// For a task whose last act is to start JavaScript work that settles the
/// promise by itself (no promise adopting another, no further step).
pub fn hand_over_settlement() -> Option<(js_sys::Function, js_sys::Function)> {
    EXECUTOR.with(|ex| {
        let id = ex.current()?;
        ex.with_task(id, |task| {
            task.io.handed_over = true;
            (task.io.resolve.clone(), task.io.reject.clone())
        })
    })
}

/// Tasks not finished yet (for tests and diagnostics).
pub fn live_tasks() -> usize {
    EXECUTOR.with(Executor::len)
}

/// Tasks lost so far to an exception that unwound through their poll.
pub fn lost_tasks() -> u64 {
    EXECUTOR.with(Executor::lost_tasks)
}

/// Steps skipped so far because workerd delivered them in another request's
/// turn (see [`spawn_for_request`]).
pub fn foreign_steps() -> u64 {
    EXECUTOR.with(Executor::foreign_steps)
}

/// Test hook: the task being polled right now.
#[cfg(all(test, target_arch = "wasm32"))]
pub(crate) fn current() -> Option<u64> {
    EXECUTOR.with(Executor::current)
}

/// Test hook: ages the task ids handed out from now on by `generations`
/// generations of their slots (ids past 2^32 with 256).
#[cfg(all(test, target_arch = "wasm32"))]
pub(crate) fn skip_task_generations(generations: u32) {
    EXECUTOR.with(|ex| ex.skip_generations(generations));
}

/// Test hook: the ids of the live tasks.
#[cfg(all(test, target_arch = "wasm32"))]
pub(crate) fn live_task_ids() -> Vec<u64> {
    EXECUTOR.with(Executor::ids)
}
