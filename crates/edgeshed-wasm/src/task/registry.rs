//! The task registry: tasks by id, spawning, reclaiming, and the task
//! being polled right now.

use super::step::step;
use super::waker::TaskWaker;
use crate::id_map::Registry;
use core::cell::RefCell;
use core::future::Future;
use core::pin::Pin;
use core::task::Waker;
use std::sync::Arc;
use wasm_bindgen::prelude::*;

pub(super) type TaskFuture = Pin<Box<dyn Future<Output = Result<JsValue, JsValue>>>>;

pub(super) struct Task {
    /// `None` while the task is being polled.
    pub(super) future: Option<TaskFuture>,
    /// Its promise is settled by someone else (see [`hand_over_settlement`]):
    /// the task's own result is ignored.
    pub(super) handed_over: bool,
    pub(super) resolve: js_sys::Function,
    pub(super) reject: js_sys::Function,
    /// Resolves the promise of the next step, for wakes from this request.
    pub(super) wake_local: Option<js_sys::Function>,
    /// Resolves the other promise of the next step, for wakes that may come
    /// from another request.
    pub(super) wake_remote: Option<js_sys::Function>,
    /// Set while the task is being polled: a wake then only marks `woken`
    /// and the task is polled again at once.
    pub(super) polling: bool,
    pub(super) woken: bool,
    /// Waiting in the run queue (outside workerd, see [`schedule`]).
    pub(super) scheduled: bool,
    /// Whether the task ever handed out a remote waker (then every pending
    /// step needs the remote promise, since an old waker may still fire).
    pub(super) uses_remote: bool,
    /// When (`Date.now()`, ms) the task is past any legitimate lifetime and
    /// may be reclaimed by [`reclaim_expired`].
    pub(super) expires_at: Option<f64>,
    /// An object of the task's own request that the host refuses to read
    /// from any other request's turn (see [`spawn_for_request`]).
    pub(super) context_probe: Option<JsValue>,
    /// Its waker, made once.
    pub(super) waker: Waker,
}

/// What [`step`] finds when it starts.
pub(super) enum Begin {
    /// The step must first check it runs in the task's own request.
    Probe(JsValue),
    /// Poll this future with this waker.
    Run(TaskFuture, Waker),
}

impl Task {
    /// Takes the future out for a step (unless `probe_first` and the task
    /// has a context probe to check).
    pub(super) fn begin(&mut self, probe_first: bool) -> Option<Begin> {
        if probe_first {
            if let Some(probe) = &self.context_probe {
                // Out of the run queue either way (a skipped step must not
                // leave the task marked as queued, or later wakes are lost).
                self.scheduled = false;
                return Some(Begin::Probe(probe.clone()));
            }
        }
        let future = self.future.take()?;
        self.polling = true;
        self.woken = false;
        self.scheduled = false;
        // Any promise of the previous step is spent (or will be ignored).
        self.wake_local = None;
        self.wake_remote = None;
        Some(Begin::Run(future, self.waker.clone()))
    }
}

thread_local! {
    /// The task being polled right now, if any (only to hand its promise's
    /// settlement over, see [`hand_over_settlement`]; never to route wakes).
    pub(super) static CURRENT: core::cell::Cell<Option<u64>> = const { core::cell::Cell::new(None) };
    pub(super) static TASKS: RefCell<Registry<Task>> = RefCell::new(Registry::default());
    /// No task expires before this (`Date.now()` ms; may be early, never
    /// late): [`reclaim_expired`] scans the tasks only once it has passed.
    static NEXT_EXPIRY: core::cell::Cell<f64> = const { core::cell::Cell::new(f64::INFINITY) };
}

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
    if let Some(at) = expires_at {
        NEXT_EXPIRY.with(|next| next.set(next.get().min(at)));
    }
    let mut future = Some(Box::pin(future) as TaskFuture);
    let mut context_probe = context_probe;
    let mut spawned_id = None;
    let promise = js_sys::Promise::new(&mut |resolve, reject| {
        let id = TASKS.with(|tasks| {
            tasks.borrow_mut().insert_with(|id| Task {
                future: future.take(),
                handed_over: false,
                resolve,
                reject,
                wake_local: None,
                wake_remote: None,
                polling: false,
                woken: false,
                scheduled: false,
                uses_remote: false,
                expires_at,
                context_probe: context_probe.take(),
                waker: Waker::from(Arc::new(TaskWaker { id })),
            })
        });
        spawned_id = Some(id);
        step(id);
    });
    let ended = spawned_id.is_none_or(|id| with_task(id, |_| ()).is_none());
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
    let now = js_sys::Date::now();
    // Called on every request: without the bound it would visit every live
    // task each time (9 % of the gateway's CPU on its shed path, measured
    // with benches/e2e/profile.mjs).
    if now < NEXT_EXPIRY.with(core::cell::Cell::get) {
        return 0;
    }
    let mut next = f64::INFINITY;
    let expired: Vec<Task> = TASKS.with(|tasks| {
        tasks.borrow_mut().take_where(|task| match task.expires_at {
            // A task being polled (no future) cannot be dropped now; later.
            Some(at) if at <= now && task.future.is_some() => true,
            Some(at) => {
                next = next.min(at);
                false
            }
            None => false,
        })
    });
    NEXT_EXPIRY.with(|cell| cell.set(next));
    // Dropped outside the borrow: dropping permits wakes other tasks.
    let count = expired.len();
    drop(expired);
    count
}

/// Runs `f` on task `id`, if it is still live.
pub(super) fn with_task<T>(id: u64, f: impl FnOnce(&mut Task) -> T) -> Option<T> {
    TASKS.with(|tasks| tasks.borrow_mut().get_mut(id).map(f))
}

/// Hands the settlement of the current task's promise to the caller: returns
/// its `resolve` and `reject`, and the task's own result will be ignored.
/// For a task whose last act is to start JavaScript work that settles the
/// promise by itself (no promise adopting another, no further step).
pub fn hand_over_settlement() -> Option<(js_sys::Function, js_sys::Function)> {
    let id = current()?;
    with_task(id, |task| {
        task.handed_over = true;
        (task.resolve.clone(), task.reject.clone())
    })
}

/// The task being polled right now, if the caller runs under [`spawn`].
pub(super) fn current() -> Option<u64> {
    CURRENT.with(core::cell::Cell::get)
}

/// Tasks not finished yet (for tests and diagnostics).
pub fn live_tasks() -> usize {
    TASKS.with(|tasks| tasks.borrow().len())
}

/// Test hook: ages the task ids handed out from now on by `generations`
/// generations of their slots (ids past 2^32 with 256).
#[cfg(all(test, target_arch = "wasm32"))]
pub(super) fn skip_task_generations(generations: u32) {
    TASKS.with(|tasks| tasks.borrow_mut().skip_generations(generations));
}

/// Test hook: the ids of the live tasks.
#[cfg(all(test, target_arch = "wasm32"))]
pub(super) fn live_task_ids() -> Vec<u64> {
    TASKS.with(|tasks| tasks.borrow().ids())
}
