//! [`Executor`]: the executor's whole state in one value — the tasks, the
//! task being polled, the run queue and the counters. Generic over what
//! the host keeps per task, so that native tests run it on a fake host.

use super::state::{Task, TaskState};
use crate::id_map::Registry;
use core::cell::{Cell, RefCell};
use std::collections::VecDeque;

/// The executor's state. Each part sits in its own cell, borrowed only
/// for the length of one method: no borrow is held while a future is
/// polled, a waker woken or a task dropped.
pub(super) struct Executor<Io, Out> {
    tasks: RefCell<Registry<Task<Io, Out>>>,
    /// The task being polled right now, if any (only to hand its promise's
    /// settlement over; never to route wakes).
    current: Cell<Option<u64>>,
    /// No task expires before this (`Date.now()` ms; may be early, never
    /// late): reclaiming scans the tasks only once it has passed.
    next_expiry: Cell<f64>,
    /// Tasks to step, in wake order (outside workerd).
    run_queue: RefCell<VecDeque<u64>>,
    /// A drain of the run queue is scheduled.
    draining: Cell<bool>,
    /// Tasks lost to an exception that unwound through their poll.
    lost: Cell<u64>,
    /// Steps skipped because they were delivered in another request's turn.
    foreign: Cell<u64>,
}

impl<Io, Out> Default for Executor<Io, Out> {
    fn default() -> Self {
        Self {
            tasks: RefCell::new(Registry::default()),
            current: Cell::new(None),
            next_expiry: Cell::new(f64::INFINITY),
            run_queue: RefCell::new(VecDeque::new()),
            draining: Cell::new(false),
            lost: Cell::new(0),
            foreign: Cell::new(0),
        }
    }
}

impl<Io, Out> Executor<Io, Out> {
    /// Adds the task that `make` builds for its fresh id.
    pub(super) fn insert(&self, make: impl FnOnce(u64) -> Task<Io, Out>) -> u64 {
        let mut expires_at = None;
        let id = self.tasks.borrow_mut().insert_with(|id| {
            let task = make(id);
            expires_at = task.expires_at;
            task
        });
        if let Some(at) = expires_at {
            self.next_expiry.set(self.next_expiry.get().min(at));
        }
        id
    }

    /// Runs `f` on task `id`, if it is still live (`f` must not call back
    /// into the executor).
    pub(super) fn with_task<T>(
        &self,
        id: u64,
        f: impl FnOnce(&mut Task<Io, Out>) -> T,
    ) -> Option<T> {
        self.tasks.borrow_mut().get_mut(id).map(f)
    }

    /// Removes task `id` (for the caller to drop outside any borrow).
    pub(super) fn remove(&self, id: u64) -> Option<Task<Io, Out>> {
        self.tasks.borrow_mut().remove(id)
    }

    /// Tasks not finished yet.
    pub(super) fn len(&self) -> usize {
        self.tasks.borrow().len()
    }

    /// The task being polled right now.
    pub(super) fn current(&self) -> Option<u64> {
        self.current.get()
    }

    /// Sets the task being polled; returns the previous one.
    pub(super) fn set_current(&self, id: Option<u64>) -> Option<u64> {
        self.current.replace(id)
    }

    /// Removes the tasks that were being polled (an exception unwound
    /// through them), counted as lost.
    pub(super) fn take_unwound(&self) -> Vec<Task<Io, Out>> {
        let lost = self
            .tasks
            .borrow_mut()
            .take_where(|task| matches!(task.state, TaskState::Polling | TaskState::PollingWoken));
        self.lost.set(self.lost.get() + lost.len() as u64);
        lost
    }

    /// Removes the tasks expired at `now` (none being polled), unless no
    /// task can have expired yet.
    pub(super) fn take_expired(&self, now: f64) -> Vec<Task<Io, Out>> {
        if now < self.next_expiry.get() {
            return Vec::new();
        }
        let mut next = f64::INFINITY;
        let expired = self
            .tasks
            .borrow_mut()
            .take_where(|task| match task.expires_at {
                // A task being polled (no future) cannot be dropped now; later.
                Some(at) if at <= now && task.future.is_some() => true,
                Some(at) => {
                    next = next.min(at);
                    false
                }
                None => false,
            });
        self.next_expiry.set(next);
        expired
    }

    /// Queues task `id` for the next drain; `true` if a drain must be
    /// scheduled.
    pub(super) fn enqueue(&self, id: u64) -> bool {
        self.run_queue.borrow_mut().push_back(id);
        self.resume_draining()
    }

    /// `true` if tasks wait in the run queue and no drain is scheduled (one
    /// then counts as scheduled).
    pub(super) fn resume_draining(&self) -> bool {
        !self.run_queue.borrow().is_empty() && !self.draining.replace(true)
    }

    /// A drain starts: returns how many tasks it steps (those queued now).
    pub(super) fn begin_drain(&self) -> usize {
        self.draining.set(false);
        self.run_queue.borrow().len()
    }

    /// The next queued task id.
    pub(super) fn next_queued(&self) -> Option<u64> {
        self.run_queue.borrow_mut().pop_front()
    }

    /// Counts a step skipped in a foreign turn.
    pub(super) fn count_foreign(&self) {
        self.foreign.set(self.foreign.get() + 1);
    }

    /// Steps skipped so far in a foreign turn.
    pub(super) fn foreign_steps(&self) -> u64 {
        self.foreign.get()
    }

    /// Tasks lost so far to an exception.
    pub(super) fn lost_tasks(&self) -> u64 {
        self.lost.get()
    }

    /// Test hook: ages the task ids handed out from now on.
    #[cfg(all(test, target_arch = "wasm32"))]
    pub(super) fn skip_generations(&self, generations: u32) {
        self.tasks.borrow_mut().skip_generations(generations);
    }

    /// Test hook: the ids of the live tasks.
    #[cfg(all(test, target_arch = "wasm32"))]
    pub(super) fn ids(&self) -> Vec<u64> {
        self.tasks.borrow().ids()
    }
}
