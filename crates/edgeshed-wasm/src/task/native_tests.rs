//! The executor core on a fake runtime (native unit tests): tasks whose
//! wakes go through the run queue, drained by the test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::executor::Executor;
use super::runtime::Runtime;
use super::state::{Task, TaskFuture};
use super::step::{drain, step};
use super::waker::task_waker;
use core::cell::{Cell, RefCell};
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use std::rc::Rc;

/// The fake runtime: a run queue that the test drains by hand.
struct Fake;

thread_local! {
    static EXECUTOR: Executor<(), u32> = Executor::default();
    /// Drains scheduled and not yet run.
    static DRAINS: Cell<usize> = const { Cell::new(0) };
    /// Outputs of the tasks that ended.
    static SETTLED: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

impl Runtime for Fake {
    type Output = u32;
    type Io = ();
    type Resume = ();
    type Probe = ();

    fn with<T>(f: impl FnOnce(&Executor<(), u32>) -> T) -> T {
        EXECUTOR.with(f)
    }
    fn run_queue() -> bool {
        true
    }
    fn schedule_drain() {
        DRAINS.with(|drains| drains.set(drains.get() + 1));
    }
    fn resume_of((): &(), _remote: bool) -> Option<()> {
        None
    }
    fn resume((): (), _id: u64) {}
    fn probe((): &()) -> Option<()> {
        None
    }
    fn in_own_context((): &()) -> bool {
        true
    }
    fn parked(_id: u64, _uses_remote: bool) {}
    fn settle((): (), output: u32) {
        SETTLED.with(|settled| settled.borrow_mut().push(output));
    }
}

/// Runs the scheduled drains, as the host's microtasks would.
fn run_microtasks() {
    while DRAINS.with(|drains| drains.replace(0)) > 0 {
        drain::<Fake>();
    }
}

/// What a probe future saw: its polls, and the waker of the last one.
#[derive(Default)]
struct Seen {
    polls: Cell<usize>,
    waker: RefCell<Option<Waker>>,
    /// Once set, the next poll is ready with this output.
    ready: Cell<Option<u32>>,
}

/// Records its polls in `Seen`.
struct Probe(Rc<Seen>);

impl Future for Probe {
    type Output = u32;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u32> {
        self.0.polls.set(self.0.polls.get() + 1);
        *self.0.waker.borrow_mut() = Some(cx.waker().clone());
        self.0.ready.get().map_or(Poll::Pending, Poll::Ready)
    }
}

/// Spawns a probe task and steps it once (as `spawn` does); returns its id.
fn spawn_probe(seen: &Rc<Seen>) -> u64 {
    let future: TaskFuture<u32> = Box::pin(Probe(Rc::clone(seen)));
    let id =
        EXECUTOR.with(|ex| ex.insert(|id| Task::new(future, (), None, task_waker::<Fake>(id))));
    step::<Fake>(id);
    id
}

fn wake(seen: &Seen) {
    seen.waker.borrow().as_ref().unwrap().wake_by_ref();
}

#[test]
fn a_task_woken_twice_is_polled_once() {
    let seen = Rc::new(Seen::default());
    spawn_probe(&seen);
    assert_eq!(seen.polls.get(), 1, "polled once when spawned");
    wake(&seen);
    wake(&seen);
    run_microtasks();
    assert_eq!(seen.polls.get(), 2, "two wakes, one more poll");
}

#[test]
fn a_task_runs_to_its_end_and_settles_once() {
    let seen = Rc::new(Seen::default());
    spawn_probe(&seen);
    seen.ready.set(Some(7));
    wake(&seen);
    run_microtasks();
    assert_eq!(SETTLED.with(|s| s.borrow().clone()), vec![7]);
    assert_eq!(EXECUTOR.with(Executor::len), 0);
    // A late wake of the ended task finds nothing.
    wake(&seen);
    run_microtasks();
    assert_eq!(seen.polls.get(), 2);
}

#[test]
fn a_task_dropped_while_queued_is_never_polled() {
    let seen = Rc::new(Seen::default());
    let id = spawn_probe(&seen);
    wake(&seen);
    // Dropped (as reclaiming does) while it waits in the run queue.
    let task = EXECUTOR.with(|ex| ex.remove(id));
    assert!(task.is_some());
    drop(task);
    // A task spawned meanwhile may take the dropped one's slot: the stale
    // queued id must not reach it either.
    let other = Rc::new(Seen::default());
    spawn_probe(&other);
    run_microtasks();
    assert_eq!(seen.polls.get(), 1, "never polled after the drop");
    assert_eq!(other.polls.get(), 1, "the newcomer is not stepped for it");
}

#[test]
fn a_task_woken_during_its_poll_is_polled_again_in_the_same_step() {
    /// Wakes itself on its first poll, ready on its second.
    struct WakesItself(u32);
    impl Future for WakesItself {
        type Output = u32;
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u32> {
            self.0 += 1;
            if self.0 == 1 {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            Poll::Ready(self.0)
        }
    }
    let future: TaskFuture<u32> = Box::pin(WakesItself(0));
    let id =
        EXECUTOR.with(|ex| ex.insert(|id| Task::new(future, (), None, task_waker::<Fake>(id))));
    step::<Fake>(id);
    assert_eq!(
        SETTLED.with(|s| s.borrow().clone()),
        vec![2],
        "done without a drain"
    );
    assert_eq!(DRAINS.with(Cell::get), 0);
}
