//! The thread's wake hints: whether a wake happening now may come from
//! another request, and whether a poll asked for remote wakes.

use core::cell::Cell;
use core::task::Waker;

thread_local! {
    /// Set while a [`RemoteWake`](super::RemoteWake) forwards a wake.
    static REMOTE_HINT: Cell<bool> = const { Cell::new(false) };
    /// Set when a [`RemoteWake`](super::RemoteWake) is polled: the polling task must prepare
    /// for remote wakes (see `step`).
    static ASKED_REMOTE: Cell<bool> = const { Cell::new(false) };
    /// Set while a wake comes from the task's own request for certain (its
    /// own timer firing): it overrides the hint.
    static OWN_SOURCE: Cell<bool> = const { Cell::new(false) };
}

/// Wakes `waker` from an event of the woken task's own request (a timer it
/// armed): even through a [`RemoteWake`](super::RemoteWake), the wake takes the local route.
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
pub(super) fn remote_now() -> bool {
    REMOTE_HINT.with(Cell::get) && !OWN_SOURCE.with(Cell::get)
}

/// Swaps the "a remote wake was asked for" flag, returning the old value
/// (a step saves and restores it around its polls).
pub(super) fn replace_asked_remote(asked: bool) -> bool {
    ASKED_REMOTE.with(|flag| flag.replace(asked))
}

/// Runs `wake` with the remote hint set (a [`RemoteWake`](super::RemoteWake)
/// forwarding a wake).
pub(super) fn with_remote_hint(wake: impl FnOnce()) {
    let previous = REMOTE_HINT.with(|hint| hint.replace(true));
    wake();
    REMOTE_HINT.with(|hint| hint.set(previous));
}

/// Marks that the task being polled must prepare for remote wakes.
pub(super) fn set_asked_remote() {
    ASKED_REMOTE.with(|flag| flag.set(true));
}
