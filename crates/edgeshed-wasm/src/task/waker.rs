//! The executor's wakers, and the hint that a wake may come from another
//! request.
//!
//! Every task has one [`TaskWaker`]. A future is polled with it (or with a
//! waker that a combinator such as `FuturesUnordered` derived from it), and
//! every wake goes through the waker the future was given: nothing looks up
//! "the task being polled" to decide whom to wake.
//!
//! In workerd a wake that comes from another request (a semaphore hand-off)
//! must resume the task through a timer hop (see the module docs of
//! `task`). [`RemoteWake`] marks such wakes: it polls its future with a
//! waker that sets a hint for the duration of the wake and then wakes the
//! waker it was given. A [`TaskWaker`] woken under the hint takes the remote
//! route; any other waker simply ignores it.

use super::hint::{remote_now, set_asked_remote, with_remote_hint};
use super::runtime::Runtime;
use super::step::wake_task;
use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use std::sync::Arc;
use std::task::Wake;

/// Wakes one task by id: only a number crosses the `Send + Sync` boundary.
struct TaskWaker<R> {
    id: u64,
    runtime: PhantomData<fn() -> R>,
}

impl<R: Runtime> Wake for TaskWaker<R> {
    fn wake(self: Arc<Self>) {
        wake_task::<R>(self.id, remote_now());
    }

    fn wake_by_ref(self: &Arc<Self>) {
        wake_task::<R>(self.id, remote_now());
    }
}

/// The waker of task `id` of runtime `R`.
pub(super) fn task_waker<R: Runtime>(id: u64) -> Waker {
    Waker::from(Arc::new(TaskWaker::<R> {
        id,
        runtime: PhantomData,
    }))
}

/// Forwards wakes to `inner` with the remote hint set.
struct HintWaker {
    inner: Waker,
}

impl Wake for HintWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        with_remote_hint(|| self.inner.wake_by_ref());
    }
}

pin_project_lite::pin_project! {
    /// Polls a future whose wake-ups may come from another request (a
    /// semaphore hand-off) with a waker that marks them as such, then wakes
    /// the waker this was polled with. See the module docs.
    pub struct RemoteWake<F> {
        #[pin]
        inner: F,
        // The waker last polled with, and the hint waker made for it.
        hint: Option<(Waker, Waker)>,
    }
}

impl<F> RemoteWake<F> {
    /// Wraps `inner`.
    pub fn new(inner: F) -> Self {
        Self { inner, hint: None }
    }
}

impl<F: Future> Future for RemoteWake<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        set_asked_remote();
        let hint = match this.hint {
            Some((given, hint)) if given.will_wake(cx.waker()) => hint,
            slot => {
                let inner = cx.waker().clone();
                let hint = Waker::from(Arc::new(HintWaker {
                    inner: inner.clone(),
                }));
                &mut slot.insert((inner, hint)).1
            }
        };
        this.inner.poll(&mut Context::from_waker(hint))
    }
}
