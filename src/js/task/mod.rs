//! A tiny executor that resumes each task in the JavaScript context that
//! started it.
//!
//! wasm-bindgen-futures keeps one global run queue: a task woken by another
//! request (a permit released elsewhere) is then polled inside *that*
//! request's turn. In workerd every I/O object belongs to the request that
//! created it, so the woken task's timers and fetches would be created on
//! behalf of the wrong request, and the waiting request itself would look
//! hung and be cancelled.
//!
//! Here, in workerd, a task that a step leaves waiting creates fresh
//! promises in its own context and registers its next step on them; its
//! waker only resolves those promises. Whoever calls a waker, the step runs
//! where the task lives.
//!
//! The executor honours the `Waker` contract: a wake goes through the waker
//! a future was polled with (see [`waker`]). Nothing is bound to "the task
//! being polled right now", so a future made or first polled under one task
//! (a nested `Limiter.run` called from another limiter's `fn`) and then
//! polled by its own task wakes its own task, and combinators such as
//! `futures-util`'s `FuturesUnordered` and `select` work inside a task.
//!
//! Two promises, because workerd settles a promise resolved from another
//! request at once but may deliver its continuation late (after the
//! resolving request's turn, or only when the owner next runs). A later wake
//! from the task's *own* timer or I/O would then find its promise already
//! settled and be lost, and workerd would cancel the request as hung. So
//! wakes that may come from another request (semaphore hand-offs, through
//! [`RemoteWake`]) resolve one promise, and all other wakes the other; a
//! task's own timer always wakes locally ([`wake_from_own_event`]), even
//! through a `RemoteWake`. For the same reason, in workerd, combinators
//! that coalesce their children's wakes (`FuturesUnordered` forwards only
//! the first wake until the next poll) must not carry a hand-off next to
//! local wakes: the gateway's fan-out uses `select_all`, which polls every
//! child with the task's own waker. Even so, workerd now and then
//! delivers a step in another request's turn: a request's task first checks
//! its request's signal and skips such a step (see [`spawn_for_request`]).
//! And every callback into wasm is guarded ([`guard`]): an exception that
//! unwinds through a poll fails its task instead of leaving it hanging.
//!
//! All of that is for workerd. Elsewhere (Node.js, browsers) nothing ties a
//! continuation to a request, so woken tasks simply wait in one run queue
//! drained in a microtask: no promise per wake.

use core::cell::RefCell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use std::sync::Arc;
use wasm_bindgen::prelude::*;

mod guard;
mod run_queue;
mod waker;

use crate::js::id_map::{id_from_js, id_to_js, Registry};
pub(crate) use guard::guard;
#[cfg(feature = "worker")]
pub(crate) use guard::lost_tasks;
use guard::{REMOTE_STEP_JS, STEP_JS, STEP_TIMER_JS};
use run_queue::{resume_draining, schedule};
use waker::{replace_asked_remote, TaskWaker};
pub(crate) use waker::{wake_from_own_event, RemoteWake};

type TaskFuture = Pin<Box<dyn Future<Output = Result<JsValue, JsValue>>>>;

struct Task {
    /// `None` while the task is being polled.
    future: Option<TaskFuture>,
    /// Its promise is settled by someone else (see [`hand_over_settlement`]):
    /// the task's own result is ignored.
    handed_over: bool,
    resolve: js_sys::Function,
    reject: js_sys::Function,
    /// Resolves the promise of the next step, for wakes from this request.
    wake_local: Option<js_sys::Function>,
    /// Resolves the other promise of the next step, for wakes that may come
    /// from another request.
    wake_remote: Option<js_sys::Function>,
    /// Set while the task is being polled: a wake then only marks `woken`
    /// and the task is polled again at once.
    polling: bool,
    woken: bool,
    /// Waiting in the run queue (outside workerd, see [`schedule`]).
    scheduled: bool,
    /// Whether the task ever handed out a remote waker (then every pending
    /// step needs the remote promise, since an old waker may still fire).
    uses_remote: bool,
    /// When (`Date.now()`, ms) the task is past any legitimate lifetime and
    /// may be reclaimed by [`reclaim_expired`].
    #[cfg_attr(not(feature = "worker"), allow(dead_code))]
    expires_at: Option<f64>,
    /// An object of the task's own request that the host refuses to read
    /// from any other request's turn (see [`spawn_for_request`]).
    context_probe: Option<JsValue>,
    /// Its waker, made once.
    waker: Waker,
}

/// What [`step`] finds when it starts.
enum Begin {
    /// The step must first check it runs in the task's own request.
    Probe(JsValue),
    /// Poll this future with this waker.
    Run(TaskFuture, Waker),
}

impl Task {
    /// Takes the future out for a step (unless `probe_first` and the task
    /// has a context probe to check).
    fn begin(&mut self, probe_first: bool) -> Option<Begin> {
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

/// The most polls in a row when a task keeps waking itself; after that it
/// yields to the event loop through its promise.
const MAX_POLLS_PER_STEP: usize = 32;

thread_local! {
    /// Steps skipped because they were delivered in another request's turn.
    static FOREIGN_STEPS: core::cell::Cell<u64> = const { core::cell::Cell::new(0) };
    /// The task being polled right now, if any (only to hand its promise's
    /// settlement over, see [`hand_over_settlement`]; never to route wakes).
    static CURRENT: core::cell::Cell<Option<u64>> = const { core::cell::Cell::new(None) };
    static TASKS: RefCell<Registry<Task>> = RefCell::new(Registry::default());
    /// The one continuation shared by all tasks: called with a task id.
    static STEP: Closure<dyn FnMut(JsValue)> = Closure::new(|id: JsValue| {
        if let Some(id) = id.as_f64().and_then(id_from_js) {
            step(id);
        }
    });
    /// The continuation of a wake that may come from another request: it
    /// runs in this task's context, but as a reaction workerd delivers
    /// between events, where I/O started (a fetch) is not counted as the
    /// request's pending work — the request can then be cancelled as hung.
    /// So it only arms a zero-delay timer, and the step runs in that timer's
    /// event, like any other work of the request.
    static REMOTE_STEP: Closure<dyn FnMut(JsValue)> = Closure::new(|id: JsValue| {
        let armed = STEP_TIMER_JS.with(|step| set_timeout_with_id(step, 0.0, &id).is_ok());
        if !armed {
            // The host refused a timer: step here rather than never.
            if let Some(id) = id.as_f64().and_then(id_from_js) {
                step(id);
            }
        }
    });
}

#[wasm_bindgen]
extern "C" {
    /// `setTimeout(callback, ms, id)`: the callback receives the id.
    #[wasm_bindgen(js_name = setTimeout, catch)]
    fn set_timeout_with_id(
        callback: &js_sys::Function,
        milliseconds: f64,
        id: &JsValue,
    ) -> Result<JsValue, JsValue>;
}

#[wasm_bindgen(module = "/src/js/glue.js")]
extern "C" {
    /// Whether this is workerd (Cloudflare Workers).
    #[wasm_bindgen(js_name = inWorkerd)]
    fn in_workerd() -> bool;
}

#[wasm_bindgen(module = "/src/js/glue.js")]
extern "C" {
    /// `promise.then(callback)`.
    #[wasm_bindgen(js_name = thenCall)]
    fn then_call(promise: &js_sys::Promise, callback: &js_sys::Function);
    /// Whether `signal` (a request's) can be read here, i.e. this turn
    /// belongs to its request.
    #[wasm_bindgen(js_name = inOwnContext)]
    fn in_own_context(signal: &JsValue) -> bool;
}

thread_local! {
    /// Only workerd needs the timer hop of `REMOTE_STEP`; elsewhere it would
    /// only add latency (browsers clamp nested zero-delay timers to 4 ms).
    static HOP_THROUGH_TIMER: bool = in_workerd();
}

/// Whether the host is workerd, where every request needs its own timers
/// and steps must stay in their request's turn.
pub(crate) fn per_request_host() -> bool {
    HOP_THROUGH_TIMER.with(|hop| *hop)
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
fn wake_task(id: u64, remote: bool) {
    // (The worker build serves workerd only: no run queue compiled in.)
    let queue = cfg!(feature = "js") && !per_request_host();
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

/// Runs `future` to completion as a task of the current JavaScript context
/// and returns a promise of its result.
#[cfg_attr(not(feature = "js"), allow(dead_code))]
pub(crate) fn spawn<F>(future: F) -> js_sys::Promise
where
    F: Future<Output = Result<JsValue, JsValue>> + 'static,
{
    spawn_task(future, None, None)
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
#[cfg_attr(not(feature = "worker"), allow(dead_code))]
pub(crate) fn spawn_for_request<F>(
    future: F,
    lifetime_ms: Option<f64>,
    context_probe: Option<JsValue>,
) -> js_sys::Promise
where
    F: Future<Output = Result<JsValue, JsValue>> + 'static,
{
    spawn_task(future, lifetime_ms, context_probe)
}

fn spawn_task<F>(
    future: F,
    lifetime_ms: Option<f64>,
    context_probe: Option<JsValue>,
) -> js_sys::Promise
where
    F: Future<Output = Result<JsValue, JsValue>> + 'static,
{
    let expires_at = lifetime_ms.map(|ms| js_sys::Date::now() + 2.0 * ms);
    let mut future = Some(Box::pin(future) as TaskFuture);
    let mut context_probe = context_probe;
    js_sys::Promise::new(&mut |resolve, reject| {
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
        step(id);
    })
}

/// Polls task `id` once, in the current context.
pub(crate) fn step(id: u64) {
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

/// After a step left task `id` waiting: in workerd, makes the promises
/// whose continuation is its next step (made here, in the task's own turn,
/// so that the next step runs there too). `woken`: it was woken on the last
/// poll allowed in one step, so it yields and goes on at once.
fn arm_next_step(id: u64, uses_remote: bool, woken: bool) {
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

/// Drops every task past its `expires_at`, and returns how many.
///
/// workerd cancels a request it believes hung (one whose only pending work is
/// a promise another request resolves — which sustained cross-request
/// hand-offs can provoke) and with it every timer and fetch of that request.
/// Its task then never completes and would keep its permits for ever. A
/// later request reclaims it here: the future is dropped, so its permits go
/// back (waking the next waiters) and its other resources are released.
#[cfg_attr(not(feature = "worker"), allow(dead_code))]
pub(crate) fn reclaim_expired() -> usize {
    let now = js_sys::Date::now();
    let expired: Vec<Task> = TASKS.with(|tasks| {
        tasks
            .borrow_mut()
            .take_where(|task| task.future.is_some() && task.expires_at.is_some_and(|at| at <= now))
    });
    // Dropped outside the borrow: dropping permits wakes other tasks.
    let count = expired.len();
    drop(expired);
    count
}

/// Runs `f` on task `id`, if it is still live.
fn with_task<T>(id: u64, f: impl FnOnce(&mut Task) -> T) -> Option<T> {
    TASKS.with(|tasks| tasks.borrow_mut().get_mut(id).map(f))
}

/// A promise whose settlement runs the next step; returns its resolver.
fn next_step_promise() -> Option<js_sys::Function> {
    let mut resolver = None;
    let promise = js_sys::Promise::new(&mut |resolve, _reject| resolver = Some(resolve));
    STEP_JS.with(|step| {
        then_call(&promise, step);
    });
    resolver
}

/// Like [`next_step_promise`], for wakes from other requests: the step runs
/// in a timer of this task's own (see `REMOTE_STEP`).
fn next_remote_step_promise() -> Option<js_sys::Function> {
    let mut resolver = None;
    let promise = js_sys::Promise::new(&mut |resolve, _reject| resolver = Some(resolve));
    REMOTE_STEP_JS.with(|step| {
        then_call(&promise, step);
    });
    resolver
}

/// Hands the settlement of the current task's promise to the caller: returns
/// its `resolve` and `reject`, and the task's own result will be ignored.
/// For a task whose last act is to start JavaScript work that settles the
/// promise by itself (no promise adopting another, no further step).
#[cfg(feature = "js")]
pub(crate) fn hand_over_settlement() -> Option<(js_sys::Function, js_sys::Function)> {
    let id = current()?;
    with_task(id, |task| {
        task.handed_over = true;
        (task.resolve.clone(), task.reject.clone())
    })
}

/// The task being polled right now, if the caller runs under [`spawn`].
#[cfg_attr(not(feature = "js"), allow(dead_code))]
pub(crate) fn current() -> Option<u64> {
    CURRENT.with(core::cell::Cell::get)
}

/// Tasks not finished yet (for tests and diagnostics).
#[cfg_attr(not(feature = "worker"), allow(dead_code))]
pub(crate) fn live_tasks() -> usize {
    TASKS.with(|tasks| tasks.borrow().len())
}

/// Steps skipped so far because workerd delivered them in another request's
/// turn (see [`spawn_for_request`]).
#[cfg_attr(not(feature = "worker"), allow(dead_code))]
pub(crate) fn foreign_steps() -> u64 {
    FOREIGN_STEPS.with(core::cell::Cell::get)
}

/// Test hook: the next task id handed out (to test ids past 2^32).
#[cfg(test)]
fn set_next_task_id(next: u64) {
    TASKS.with(|tasks| tasks.borrow_mut().set_next_id(next));
}

#[cfg(all(test, target_arch = "wasm32"))]
mod tests;
#[cfg(all(test, target_arch = "wasm32"))]
mod tests_wakers;
