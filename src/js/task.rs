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
}

#[derive(Default)]
struct Tasks {
    next_id: u32,
    live: HashMap<u32, Task>,
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
}

/// Wakes one task by id: only a number crosses the `Send + Sync` boundary.
struct TaskWaker {
    id: u32,
    remote: bool,
}

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let resolve = TASKS.with(|tasks| {
            let tasks = tasks.borrow();
            let task = tasks.live.get(&self.id)?;
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
pub(crate) fn spawn<F>(future: F) -> js_sys::Promise
where
    F: Future<Output = Result<JsValue, JsValue>> + 'static,
{
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
                },
            );
            id
        });
        step(id);
    })
}

/// Polls task `id` once, in the current context.
pub(crate) fn step(id: u32) {
    let Some(mut future) = TASKS.with(|tasks| {
        tasks
            .borrow_mut()
            .live
            .get_mut(&id)
            .and_then(|task| task.future.take())
    }) else {
        return;
    };
    // The next step waits on promises made here, so it runs here.
    let (wake_local, wake_remote) = (next_step_promise(), next_step_promise());
    TASKS.with(|tasks| {
        if let Some(task) = tasks.borrow_mut().live.get_mut(&id) {
            task.wake_local = wake_local;
            task.wake_remote = wake_remote;
        }
    });

    let waker = Waker::from(Arc::new(TaskWaker { id, remote: false }));
    let previous = CURRENT.with(|current| current.replace(Some(id)));
    let outcome = future.as_mut().poll(&mut Context::from_waker(&waker));
    CURRENT.with(|current| current.set(previous));
    let finished = TASKS.with(|tasks| {
        let mut tasks = tasks.borrow_mut();
        match outcome {
            Poll::Pending => {
                if let Some(task) = tasks.live.get_mut(&id) {
                    task.future = Some(future);
                }
                None
            }
            Poll::Ready(result) => tasks.live.remove(&id).map(|task| (task, result)),
        }
    });
    if let Some((task, result)) = finished {
        let _ = match result {
            Ok(value) => task.resolve.call1(&JsValue::UNDEFINED, &value),
            Err(error) => task.reject.call1(&JsValue::UNDEFINED, &error),
        };
    }
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
                let waker = Waker::from(Arc::new(TaskWaker { id, remote: true }));
                self.project().inner.poll(&mut Context::from_waker(&waker))
            }
            None => self.project().inner.poll(cx),
        }
    }
}

/// Tasks not finished yet (for tests and diagnostics).
#[allow(dead_code)]
pub(crate) fn live_tasks() -> usize {
    TASKS.with(|tasks| tasks.borrow().live.len())
}
