//! What the fan-out admission tests (`fanout_admission.rs`,
//! `fanout_random.rs`) build on: a one-thread executor that runs its tasks
//! until none is woken (and counts the wakes), a call's permits taken from
//! real `Admission`s on a manual clock (its origin's local limit, then an
//! optional shared one standing for the fleet budget) that reports where
//! the call is, and a request's calls run together until one decides.
#![allow(dead_code)]

use edgeshed::admission::{Admission, AdmitError, Call, Options, Policy, QueueDiscipline};
use edgeshed::semaphore::Permit;
use edgeshed::time::ManualClock;
use std::cell::Cell;
use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

/// Which permit of its origin a call waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Local,
    Budget,
}

/// Where a call is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Where {
    /// Not entered into any queue yet.
    Unentered,
    /// Queued for a permit (holding its local one when waiting for the budget).
    Queued(Stage),
    /// Admitted (every permit held), not fetching yet: at the gate.
    Holding,
    Fetching,
    Done,
    Refused,
}

/// A call's permits: its local one and its budget's, if any.
pub type Held = (Permit, Option<Permit>);

/// One call's admission: `local`, then `budget` (if any), reporting to `probe`.
pub struct Staged {
    local: Option<edgeshed::admission::Admit<ManualClock>>,
    budget: Option<(Admission<ManualClock>, Call)>,
    waiting: Option<(Permit, edgeshed::admission::Admit<ManualClock>)>,
    probe: Rc<Cell<Where>>,
}

impl Staged {
    pub fn new(
        local: &Admission<ManualClock>,
        budget: Option<&Admission<ManualClock>>,
        call: Call,
        probe: Rc<Cell<Where>>,
    ) -> Self {
        probe.set(Where::Unentered);
        Self {
            local: Some(local.admit_call(call.clone())),
            budget: budget.map(|budget| (budget.clone(), call)),
            waiting: None,
            probe,
        }
    }
}

impl Future for Staged {
    type Output = Result<Held, AdmitError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if let Some(local) = this.local.as_mut() {
            let outcome = match Pin::new(local).poll(cx) {
                Poll::Pending => {
                    this.probe.set(Where::Queued(Stage::Local));
                    return Poll::Pending;
                }
                Poll::Ready(outcome) => outcome,
            };
            this.local = None;
            let permit = match outcome {
                Ok(permit) => permit,
                Err(error) => {
                    this.probe.set(Where::Refused);
                    return Poll::Ready(Err(error));
                }
            };
            match this.budget.take() {
                None => {
                    this.probe.set(Where::Holding);
                    return Poll::Ready(Ok((permit, None)));
                }
                Some((budget, call)) => this.waiting = Some((permit, budget.admit_call(call))),
            }
        }
        let Some((_, budget)) = this.waiting.as_mut() else {
            return Poll::Pending;
        };
        let outcome = match Pin::new(budget).poll(cx) {
            Poll::Pending => {
                this.probe.set(Where::Queued(Stage::Budget));
                return Poll::Pending;
            }
            Poll::Ready(outcome) => outcome,
        };
        let Some((local, _)) = this.waiting.take() else {
            return Poll::Pending;
        };
        match outcome {
            Ok(budget) => {
                this.probe.set(Where::Holding);
                Poll::Ready(Ok((local, Some(budget))))
            }
            Err(error) => {
                this.probe.set(Where::Refused);
                Poll::Ready(Err(error))
            }
        }
    }
}

/// A limit of `limit` with a queue of `max_queue` waiting at most `timeout`.
pub fn limit(
    clock: &ManualClock,
    limit: usize,
    max_queue: usize,
    timeout: Duration,
    discipline: QueueDiscipline,
) -> Admission<ManualClock> {
    let options = Options::new().discipline(discipline);
    Admission::with_options(
        limit,
        Policy::queue(max_queue, timeout),
        options,
        clock.clone(),
    )
    .unwrap()
}

/// Runs `calls` together (each polled whenever the task is woken, as the
/// gateway's `select_all` does) until all are done or a required one
/// (`required[i]`) failed; the rest are then dropped. Whether all required
/// calls succeeded.
pub async fn until_decided<'a>(
    mut calls: Vec<Option<Pin<Box<dyn Future<Output = bool> + 'a>>>>,
    required: Vec<bool>,
) -> bool {
    std::future::poll_fn(move |cx| {
        let mut pending = false;
        for (index, slot) in calls.iter_mut().enumerate() {
            let Some(call) = slot.as_mut() else { continue };
            match call.as_mut().poll(cx) {
                Poll::Pending => pending = true,
                Poll::Ready(ok) => {
                    *slot = None;
                    if !ok && required.get(index).copied().unwrap_or(false) {
                        calls.clear();
                        return Poll::Ready(false);
                    }
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(true)
        }
    })
    .await
}

struct TaskWake {
    id: usize,
    woken: Arc<Mutex<BTreeSet<usize>>>,
    wakes: Arc<AtomicUsize>,
}

impl Wake for TaskWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.wakes.fetch_add(1, Ordering::SeqCst);
        self.woken.lock().unwrap().insert(self.id);
    }
}

/// A one-thread executor: `run` polls woken tasks until none is.
#[derive(Default)]
pub struct Executor {
    tasks: Vec<Option<Pin<Box<dyn Future<Output = ()>>>>>,
    woken: Arc<Mutex<BTreeSet<usize>>>,
    wakes: Arc<AtomicUsize>,
}

impl Executor {
    pub fn spawn(&mut self, task: impl Future<Output = ()> + 'static) {
        let id = self.tasks.len();
        self.tasks.push(Some(Box::pin(task)));
        self.woken.lock().unwrap().insert(id);
    }

    /// Polls woken tasks until none is woken.
    pub fn run(&mut self) {
        loop {
            let next = self.woken.lock().unwrap().pop_first();
            let Some(id) = next else { return };
            let waker = Waker::from(Arc::new(TaskWake {
                id,
                woken: Arc::clone(&self.woken),
                wakes: Arc::clone(&self.wakes),
            }));
            let Some(slot) = self.tasks.get_mut(id) else {
                continue;
            };
            if let Some(task) = slot.as_mut() {
                if task
                    .as_mut()
                    .poll(&mut Context::from_waker(&waker))
                    .is_ready()
                {
                    *slot = None;
                }
            }
        }
    }

    /// Wakes so far (of every task).
    pub fn wakes(&self) -> usize {
        self.wakes.load(Ordering::SeqCst)
    }

    /// Tasks not finished.
    pub fn live(&self) -> usize {
        self.tasks.iter().filter(|task| task.is_some()).count()
    }
}
