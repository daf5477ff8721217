//! One task: its future, its [`TaskState`] and what the host keeps for it.

use core::future::Future;
use core::pin::Pin;
use core::task::Waker;

/// A task's future, boxed.
pub(super) type TaskFuture<Out> = Pin<Box<dyn Future<Output = Out>>>;

/// Where a task is in its life between steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TaskState {
    /// Parked: its future waits for a wake.
    Waiting,
    /// Woken and waiting in the run queue (outside workerd).
    Queued,
    /// Being polled (its future is out of the task).
    Polling,
    /// Woken while being polled: it is polled again at once.
    PollingWoken,
}

/// One task of the executor.
pub(super) struct Task<Io, Out> {
    /// `None` while the task is being polled.
    pub(super) future: Option<TaskFuture<Out>>,
    pub(super) state: TaskState,
    /// Whether the task ever handed out a remote waker (then every pending
    /// step needs the remote promise, since an old waker may still fire).
    pub(super) uses_remote: bool,
    /// When (`Date.now()`, ms) the task is past any legitimate lifetime and
    /// may be reclaimed.
    pub(super) expires_at: Option<f64>,
    /// What the host keeps for the task (its promise's resolvers...).
    pub(super) io: Io,
    /// Its waker, made once.
    pub(super) waker: Waker,
}

impl<Io, Out> Task<Io, Out> {
    /// A task that has not been polled yet.
    pub(super) fn new(
        future: TaskFuture<Out>,
        io: Io,
        expires_at: Option<f64>,
        waker: Waker,
    ) -> Self {
        Self {
            future: Some(future),
            state: TaskState::Waiting,
            uses_remote: false,
            expires_at,
            io,
            waker,
        }
    }
}
