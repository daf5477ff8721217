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

use core::cell::Cell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use std::sync::Arc;
use std::task::Wake;

thread_local! {
    /// Set while a [`RemoteWake`] forwards a wake.
    static REMOTE_HINT: Cell<bool> = const { Cell::new(false) };
    /// Set when a [`RemoteWake`] is polled: the polling task must prepare
    /// for remote wakes (see `step`).
    static ASKED_REMOTE: Cell<bool> = const { Cell::new(false) };
    /// Set while a wake comes from the task's own request for certain (its
    /// own timer firing): it overrides the hint.
    static OWN_SOURCE: Cell<bool> = const { Cell::new(false) };
}

/// Wakes `waker` from an event of the woken task's own request (a timer it
/// armed): even through a [`RemoteWake`], the wake takes the local route.
///
/// This matters in workerd: a hand-off from another request resolves the
/// task's "remote" promise, whose continuation workerd may deliver late; a
/// timer wake that resolved the same (already settled) promise would be
/// lost, and the request cancelled as hung.
pub fn wake_from_own_event(waker: Waker) {
    let previous = OWN_SOURCE.with(|own| own.replace(true));
    waker.wake();
    OWN_SOURCE.with(|own| own.set(previous));
}

/// Whether a wake happening now may come from another request.
fn remote_now() -> bool {
    REMOTE_HINT.with(Cell::get) && !OWN_SOURCE.with(Cell::get)
}

/// Wakes one task by id: only a number crosses the `Send + Sync` boundary.
pub(super) struct TaskWaker {
    pub(super) id: u64,
}

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        super::wake::wake_task(self.id, remote_now());
    }

    fn wake_by_ref(self: &Arc<Self>) {
        super::wake::wake_task(self.id, remote_now());
    }
}

/// Swaps the "a remote wake was asked for" flag, returning the old value
/// (a step saves and restores it around its polls).
pub(super) fn replace_asked_remote(asked: bool) -> bool {
    ASKED_REMOTE.with(|flag| flag.replace(asked))
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
        let previous = REMOTE_HINT.with(|hint| hint.replace(true));
        self.inner.wake_by_ref();
        REMOTE_HINT.with(|hint| hint.set(previous));
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
        ASKED_REMOTE.with(|flag| flag.set(true));
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
