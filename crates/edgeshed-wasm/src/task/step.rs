//! The executor's moves, generic over its [`Runtime`]: a step polls a task
//! until it is pending (or done), at most a bounded number of times in a
//! row; a wake arranges the next step; a drain steps the run queue.

use super::executor::Executor;
use super::hint::replace_asked_remote;
use super::runtime::Runtime;
use super::state::{Task, TaskState};
use core::task::{Context, Poll};

/// The most polls in a row when a task keeps waking itself; after that it
/// yields to the event loop.
const MAX_POLLS_PER_STEP: usize = 32;

/// Takes task `id`'s future out for a step.
fn begin<Io, Out>(
    task: &mut Task<Io, Out>,
) -> Option<(super::state::TaskFuture<Out>, core::task::Waker)> {
    let future = task.future.take()?;
    task.state = TaskState::Polling;
    Some((future, task.waker.clone()))
}

/// Polls task `id` once, in the current context.
pub(super) fn step<R: Runtime>(id: u64) {
    let probe = R::with(|ex| {
        ex.with_task(id, |task| {
            let probe = R::probe(&task.io)?;
            // Out of the run queue either way (a skipped step must not leave
            // the task marked as queued, or later wakes are lost).
            if task.state == TaskState::Queued {
                task.state = TaskState::Waiting;
            }
            Some(probe)
        })
    })
    .flatten();
    if let Some(probe) = probe {
        if !R::in_own_context(&probe) {
            R::with(Executor::count_foreign);
            return;
        }
    }
    let Some((mut future, waker)) = R::with(|ex| ex.with_task(id, begin)).flatten() else {
        return;
    };
    let previous = R::with(|ex| ex.set_current(Some(id)));
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
        let next = R::with(|ex| {
            ex.with_task(id, |task| {
                task.uses_remote |= asked_remote;
                let woken = task.state == TaskState::PollingWoken;
                if woken && polls < MAX_POLLS_PER_STEP {
                    task.state = TaskState::Polling;
                    return None;
                }
                task.state = TaskState::Waiting;
                task.future = parked.take();
                Some((task.uses_remote, woken))
            })
        });
        match (next, parked.take()) {
            // Woken during the poll: again.
            (Some(None), Some(again)) => {
                future = again;
                polls += 1;
            }
            (Some(Some((uses_remote, woken))), _) => {
                R::with(|ex| ex.set_current(previous));
                replace_asked_remote(outer_asked_remote);
                R::parked(id, uses_remote);
                // Woken on the last poll allowed in one step: it yields and
                // goes on at once.
                if woken {
                    wake_task::<R>(id, false);
                }
                return;
            }
            // The task is gone (reclaimed meanwhile): drop the future.
            _ => break None,
        }
    };
    R::with(|ex| ex.set_current(previous));
    replace_asked_remote(outer_asked_remote);
    let Some(result) = outcome else {
        return;
    };
    if let Some(task) = R::with(|ex| ex.remove(id)) {
        R::settle(task.io, result);
    }
}

/// How a woken task gets its next step.
enum Next<Resume> {
    /// Through a resume of its own (workerd).
    Resume(Resume),
    /// Through the run queue (elsewhere).
    Queue,
}

/// Arranges the next step of task `id` (`remote`: the wake may come from
/// another request).
pub(super) fn wake_task<R: Runtime>(id: u64, remote: bool) {
    let queue = R::run_queue();
    let next = R::with(|ex| {
        ex.with_task(id, |task| match task.state {
            TaskState::Polling | TaskState::PollingWoken => {
                task.state = TaskState::PollingWoken;
                None
            }
            TaskState::Queued => None,
            TaskState::Waiting if queue => {
                task.state = TaskState::Queued;
                Some(Next::Queue)
            }
            TaskState::Waiting => R::resume_of(&task.io, remote).map(Next::Resume),
        })
    })
    .flatten();
    match next {
        Some(Next::Resume(resume)) => R::resume(resume, id),
        Some(Next::Queue) if R::with(|ex| ex.enqueue(id)) => R::schedule_drain(),
        _ => {}
    }
}

/// Steps every task queued so far (tasks woken meanwhile wait for the next
/// drain, so that a task waking itself cannot starve the event loop). Ids
/// are taken one at a time: if a step unwinds, the rest stay queued for the
/// recovery to drain.
pub(super) fn drain<R: Runtime>() {
    let pending = R::with(Executor::begin_drain);
    for _ in 0..pending {
        let Some(id) = R::with(Executor::next_queued) else {
            break;
        };
        step::<R>(id);
    }
}

/// Schedules a drain if tasks wait in the run queue and none is pending.
pub(super) fn resume_draining<R: Runtime>() {
    if R::with(Executor::resume_draining) {
        R::schedule_drain();
    }
}
