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
//! Here every task, before each poll, creates fresh promises in its own
//! context and registers its next step on them; its wakers only resolve
//! those promises. Whoever calls a waker, the step runs where the task lives.
//!
//! Two promises, because workerd settles a promise resolved from another
//! request at once but may deliver its continuation late (after the
//! resolving request's turn, or only when the owner next runs). A later wake
//! from the task's *own* timer or I/O would then find its promise already
//! settled and be lost, and workerd would cancel the request as hung. So
//! wakes that may come from another request (semaphore hand-offs, through
//! [`RemoteWake`]) resolve one promise, and all other wakes the other; the
//! task's own timers step it directly.

use core::cell::RefCell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use std::collections::HashMap;
use std::sync::Arc;
use std::task::Wake;
use wasm_bindgen::prelude::*;

type TaskFuture = Pin<Box<dyn Future<Output = Result<JsValue, JsValue>>>>;

struct Task {
    /// `None` while the task is being polled.
    future: Option<TaskFuture>,
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
    /// Whether the task ever handed out a remote waker (then every pending
    /// step needs the remote promise, since an old waker may still fire).
    uses_remote: bool,
    /// When (`Date.now()`, ms) the task is past any legitimate lifetime and
    /// may be reclaimed by [`reclaim_expired`].
    #[cfg_attr(not(feature = "worker"), allow(dead_code))]
    expires_at: Option<f64>,
}

/// The most polls in a row when a task keeps waking itself; after that it
/// yields to the event loop through its promise.
const MAX_POLLS_PER_STEP: usize = 32;

/// A hasher for the sequential `u32` ids of tasks and timers (multiplicative
/// hashing: far cheaper than SipHash, and ids are not attacker-chosen).
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl core::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*byte)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u32(&mut self, id: u32) {
        self.0 = u64::from(id).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// A map keyed by task or timer id.
pub(crate) type IdMap<T> = HashMap<u32, T, core::hash::BuildHasherDefault<IdHasher>>;

#[derive(Default)]
struct Tasks {
    next_id: u32,
    live: IdMap<Task>,
}

thread_local! {
    /// The task being polled right now, if any.
    static CURRENT: core::cell::Cell<Option<u32>> = const { core::cell::Cell::new(None) };
    static TASKS: RefCell<Tasks> = RefCell::new(Tasks::default());
    /// The one continuation shared by all tasks: called with a task id.
    static STEP: Closure<dyn FnMut(JsValue)> = Closure::new(|id: JsValue| {
        if let Some(id) = id.as_f64() {
            step(id as u32);
        }
    });
    /// The continuation of a wake that may come from another request: it
    /// runs in this task's context, but as a reaction workerd delivers
    /// between events, where I/O started (a fetch) is not counted as the
    /// request's pending work — the request can then be cancelled as hung.
    /// So it only arms a zero-delay timer, and the step runs in that timer's
    /// event, like any other work of the request.
    static REMOTE_STEP: Closure<dyn FnMut(JsValue)> = Closure::new(|id: JsValue| {
        STEP.with(|step| {
            let _ = set_timeout_with_id(step.as_ref().unchecked_ref(), 0.0, &id);
        });
    });
}

#[wasm_bindgen]
extern "C" {
    /// `setTimeout(callback, ms, id)`: the callback receives the id.
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout_with_id(callback: &js_sys::Function, milliseconds: f64, id: &JsValue)
        -> JsValue;
}

#[wasm_bindgen(inline_js = r#"
export function inWorkerd() {
  return typeof navigator !== "undefined" && navigator.userAgent === "Cloudflare-Workers";
}
"#)]
extern "C" {
    /// Whether this is workerd (Cloudflare Workers).
    #[wasm_bindgen(js_name = inWorkerd)]
    fn in_workerd() -> bool;
}

thread_local! {
    /// Only workerd needs the timer hop of `REMOTE_STEP`; elsewhere it would
    /// only add latency (browsers clamp nested zero-delay timers to 4 ms).
    static HOP_THROUGH_TIMER: bool = in_workerd();
}

/// Wakes one task by id: only a number crosses the `Send + Sync` boundary.
struct TaskWaker {
    id: u32,
    remote: bool,
}

impl TaskWaker {
    fn wake_now(&self) {
        let resolve = with_task(self.id, |task| task.wake_local.clone()).flatten();
        if let Some(resolve) = resolve {
            let _ = resolve.call1(&JsValue::UNDEFINED, &JsValue::from(self.id));
        }
    }
}

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let resolve = TASKS.with(|tasks| {
            let mut tasks = tasks.borrow_mut();
            let task = tasks.live.get_mut(&self.id)?;
            if task.polling {
                task.woken = true;
                return None;
            }
            if self.remote {
                task.wake_remote.clone()
            } else {
                task.wake_local.clone()
            }
        });
        if let Some(resolve) = resolve {
            let _ = resolve.call1(&JsValue::UNDEFINED, &JsValue::from(self.id));
        }
    }
}

/// Runs `future` to completion as a task of the current JavaScript context
/// and returns a promise of its result.
#[cfg_attr(not(feature = "js"), allow(dead_code))]
pub(crate) fn spawn<F>(future: F) -> js_sys::Promise
where
    F: Future<Output = Result<JsValue, JsValue>> + 'static,
{
    spawn_with_lifetime(future, None)
}

/// Like [`spawn`], for a task that can never legitimately live longer than
/// `lifetime_ms`: once that has passed twice over, [`reclaim_expired`] drops
/// it, returning whatever permits it holds.
pub(crate) fn spawn_with_lifetime<F>(future: F, lifetime_ms: Option<f64>) -> js_sys::Promise
where
    F: Future<Output = Result<JsValue, JsValue>> + 'static,
{
    let expires_at = lifetime_ms.map(|ms| js_sys::Date::now() + 2.0 * ms);
    let mut future = Some(Box::pin(future) as TaskFuture);
    js_sys::Promise::new(&mut |resolve, reject| {
        let id = TASKS.with(|tasks| {
            let mut tasks = tasks.borrow_mut();
            let id = tasks.next_id;
            tasks.next_id = tasks.next_id.wrapping_add(1);
            tasks.live.insert(
                id,
                Task {
                    future: future.take(),
                    resolve,
                    reject,
                    wake_local: None,
                    wake_remote: None,
                    polling: false,
                    woken: false,
                    uses_remote: false,
                    expires_at,
                },
            );
            id
        });
        step(id);
    })
}

/// Polls task `id` once, in the current context.
pub(crate) fn step(id: u32) {
    let Some(mut future) = with_task(id, |task| {
        task.polling = true;
        task.woken = false;
        // Any promise of the previous step is spent (or will be ignored).
        task.wake_local = None;
        task.wake_remote = None;
        task.future.take()
    })
    .flatten() else {
        return;
    };
    let waker = Waker::from(Arc::new(TaskWaker { id, remote: false }));
    let previous = CURRENT.with(|current| current.replace(Some(id)));
    let mut outcome = Poll::Pending;
    for _ in 0..MAX_POLLS_PER_STEP {
        outcome = future.as_mut().poll(&mut Context::from_waker(&waker));
        let woken = with_task(id, |task| core::mem::take(&mut task.woken)).unwrap_or(false);
        if outcome.is_ready() || !woken {
            break;
        }
    }
    CURRENT.with(|current| current.set(previous));
    let result = match outcome {
        Poll::Ready(result) => result,
        Poll::Pending => {
            // Still waiting: only now make the promises that wakes resolve.
            // They are made here, in this task's context, so the next step
            // runs here too.
            let uses_remote = with_task(id, |task| {
                task.polling = false;
                task.future = Some(future);
                task.uses_remote
            })
            .unwrap_or(false);
            let wake_local = next_step_promise();
            let wake_remote = uses_remote.then(next_remote_step_promise).flatten();
            let spin_again = with_task(id, |task| {
                task.wake_local = wake_local;
                task.wake_remote = wake_remote;
                // Woken on the last of MAX_POLLS_PER_STEP polls: yield, then go on.
                core::mem::take(&mut task.woken)
            });
            if spin_again == Some(true) {
                TaskWaker { id, remote: false }.wake_now();
            }
            return;
        }
    };
    if let Some(task) = TASKS.with(|tasks| tasks.borrow_mut().live.remove(&id)) {
        let _ = match result {
            Ok(value) => task.resolve.call1(&JsValue::UNDEFINED, &value),
            Err(error) => task.reject.call1(&JsValue::UNDEFINED, &error),
        };
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
        let mut tasks = tasks.borrow_mut();
        let ids: Vec<u32> = tasks
            .live
            .iter()
            .filter(|(_, task)| {
                task.future.is_some() && task.expires_at.is_some_and(|at| at <= now)
            })
            .map(|(id, _)| *id)
            .collect();
        ids.iter().filter_map(|id| tasks.live.remove(id)).collect()
    });
    // Dropped outside the borrow: dropping permits wakes other tasks.
    let count = expired.len();
    drop(expired);
    count
}

/// Runs `f` on task `id`, if it is still live.
fn with_task<T>(id: u32, f: impl FnOnce(&mut Task) -> T) -> Option<T> {
    TASKS.with(|tasks| tasks.borrow_mut().live.get_mut(&id).map(f))
}

/// A promise whose settlement runs the next step; returns its resolver.
fn next_step_promise() -> Option<js_sys::Function> {
    let mut resolver = None;
    let promise = js_sys::Promise::new(&mut |resolve, _reject| resolver = Some(resolve));
    STEP.with(|step| {
        let _ = promise.then(step);
    });
    resolver
}

/// Like [`next_step_promise`], for wakes from other requests: the step runs
/// in a timer of this task's own (see `REMOTE_STEP`).
fn next_remote_step_promise() -> Option<js_sys::Function> {
    if !HOP_THROUGH_TIMER.with(|hop| *hop) {
        return next_step_promise();
    }
    let mut resolver = None;
    let promise = js_sys::Promise::new(&mut |resolve, _reject| resolver = Some(resolve));
    REMOTE_STEP.with(|step| {
        let _ = promise.then(step);
    });
    resolver
}

/// The task being polled right now, if the caller runs under [`spawn`].
pub(crate) fn current() -> Option<u32> {
    CURRENT.with(core::cell::Cell::get)
}

pin_project_lite::pin_project! {
    /// Polls a future whose wake-ups may come from another request (a
    /// semaphore hand-off) with the task's "remote" waker. See the module docs.
    pub(crate) struct RemoteWake<F> {
        #[pin]
        inner: F,
    }
}

impl<F> RemoteWake<F> {
    pub(crate) fn new(inner: F) -> Self {
        Self { inner }
    }
}

impl<F: Future> Future for RemoteWake<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        match current() {
            Some(id) => {
                with_task(id, |task| task.uses_remote = true);
                let waker = Waker::from(Arc::new(TaskWaker { id, remote: true }));
                self.project().inner.poll(&mut Context::from_waker(&waker))
            }
            None => self.project().inner.poll(cx),
        }
    }
}

/// Tasks not finished yet (for tests and diagnostics).
#[cfg_attr(not(feature = "worker"), allow(dead_code))]
pub(crate) fn live_tasks() -> usize {
    TASKS.with(|tasks| tasks.borrow().live.len())
}
