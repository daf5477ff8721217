//! The fan-out admission (src/fanout_admission/): a request's calls take
//! their permits one at a time in the order of their origins, wait only
//! from the first that must queue, and fetch only once every required call
//! is admitted; over real `Admission`s on a manual clock.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]

#[path = "support/fanout_kit.rs"]
mod kit;

use edgeshed::admission::{Admission, Call, Criticality, QueueDiscipline};
use edgeshed::time::ManualClock;
use edgeshed_worker::fanout_admission::{FanOutAdmission, Planned};
use futures_util::future::FutureExt;
use kit::{Executor, Staged};
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;

type Origin = Admission<ManualClock>;

fn origins(clock: &ManualClock, limits: &[usize]) -> Vec<Origin> {
    let timeout = Duration::from_millis(3000);
    let fifo = QueueDiscipline::Fifo;
    limits
        .iter()
        .map(|&l| kit::limit(clock, l, 4, timeout, fifo))
        .collect()
}

/// Calls (origin index, required) of one request to `origins`.
fn plan(
    origins: &[Origin],
    calls: &[(usize, bool)],
) -> FanOutAdmission<edgeshed::admission::Admit<ManualClock>> {
    FanOutAdmission::new(
        calls
            .iter()
            .enumerate()
            .map(|(position, &(origin, required))| Planned {
                position,
                origin,
                required,
                acquire: origins[origin].admit(),
            }),
    )
}

fn busy(origin: &Origin) -> (usize, usize) {
    let stats = origin.stats();
    (stats.in_flight, stats.queued)
}

#[test]
fn an_uncontended_request_takes_every_permit_in_its_first_poll_and_wakes_nothing() {
    let clock = ManualClock::new();
    let origins = origins(&clock, &[1, 1, 1]);
    let admitted = Rc::new(Cell::new(0));
    let mut executor = Executor::default();
    let (task_origins, count) = (origins.clone(), Rc::clone(&admitted));
    executor.spawn(async move {
        // listed 2, 0, 1: taken 0, 1, 2
        let admission = plan(&task_origins, &[(2, true), (0, true), (1, false)]);
        for position in 0..3 {
            assert!(admission.turn(position).unwrap().await.is_ok());
            count.set(count.get() + 1);
        }
    });
    executor.run();
    assert_eq!(admitted.get(), 3);
    assert_eq!(executor.live(), 0, "done in the task's first poll");
    assert_eq!(executor.wakes(), 0, "no waker stored, nothing woken");
    assert!(origins
        .iter()
        .all(|o| busy(o) == (0, 0) && o.stats().admitted == 1));
}

#[test]
fn a_call_that_must_wait_holds_back_every_call_behind_it_in_the_order() {
    let clock = ManualClock::new();
    let origins = origins(&clock, &[1, 1, 1]);
    let held = origins[1].try_admit().unwrap();
    let admission = plan(&origins, &[(2, true), (1, true), (0, true)]);
    let mut turns: Vec<_> = (0..3)
        .map(|p| Box::pin(admission.turn(p).unwrap()))
        .collect();
    assert!(turns
        .iter_mut()
        .all(|t| t.as_mut().now_or_never().is_none()));
    assert_eq!(
        busy(&origins[0]),
        (1, 0),
        "origin 0, first in the order, is held"
    );
    assert_eq!(busy(&origins[1]), (1, 1), "origin 1 is queued for");
    assert_eq!(busy(&origins[2]), (0, 0), "origin 2 is not even queued for");
    drop(held);
    let outcomes: Vec<_> = turns.into_iter().map(|t| t.now_or_never()).collect();
    assert!(
        outcomes.iter().all(|o| matches!(o, Some(Ok(_)))),
        "all admitted, the gate opened"
    );
    assert!(origins.iter().all(|o| o.stats().in_flight == 1));
}

#[test]
fn a_refused_required_call_decides_the_request_and_nothing_after_it_is_taken() {
    let clock = ManualClock::new();
    let mut origins = origins(&clock, &[1, 1, 1]);
    // origin 1 sheds (no queue) and is full
    origins[1] = kit::limit(
        &clock,
        1,
        0,
        Duration::from_millis(10),
        QueueDiscipline::Fifo,
    );
    let held = origins[1].try_admit().unwrap();
    let admission = plan(&origins, &[(0, true), (1, true), (2, true)]);
    let mut first = Box::pin(admission.turn(0).unwrap());
    assert!(
        first.as_mut().now_or_never().is_none(),
        "admitted, at the gate"
    );
    assert!(
        admission.turn(1).unwrap().now_or_never().unwrap().is_err(),
        "shed"
    );
    assert!(
        first.as_mut().now_or_never().is_none(),
        "never goes on to fetch"
    );
    assert_eq!(origins[2].stats().admitted, 0, "origin 2 was never asked");
    drop(first);
    drop(admission);
    assert!(origins.iter().all(|o| o.stats().queued == 0));
    assert_eq!(busy(&origins[0]), (0, 0), "origin 0's permit came back");
    drop(held);
}

#[test]
fn an_optional_call_that_must_wait_holds_nobody_back_and_goes_on_when_admitted() {
    let clock = ManualClock::new();
    let origins = origins(&clock, &[1, 1]);
    let held = origins[0].try_admit().unwrap();
    let admission = plan(&origins, &[(0, false), (1, true)]);
    let mut optional = Box::pin(admission.turn(0).unwrap());
    assert!(
        optional.as_mut().now_or_never().is_none(),
        "queued, out of line"
    );
    assert!(admission.turn(1).unwrap().now_or_never().unwrap().is_ok());
    drop(held);
    assert!(optional.now_or_never().unwrap().is_ok());
}

#[test]
fn an_admitted_optional_call_waits_at_the_gate_for_the_required_ones() {
    let clock = ManualClock::new();
    let origins = origins(&clock, &[1, 1]);
    let held = origins[1].try_admit().unwrap();
    let admission = plan(&origins, &[(0, false), (1, true)]);
    let mut optional = Box::pin(admission.turn(0).unwrap());
    let mut required = Box::pin(admission.turn(1).unwrap());
    assert!(optional.as_mut().now_or_never().is_none());
    assert!(required.as_mut().now_or_never().is_none());
    assert_eq!(
        busy(&origins[0]),
        (1, 0),
        "the optional call holds its permit"
    );
    drop(held);
    assert!(optional.now_or_never().unwrap().is_ok(), "the gate opened");
    assert!(required.now_or_never().unwrap().is_ok());
}

#[test]
fn a_route_naming_one_origin_twice_at_limit_1_sends_one_call_after_the_other() {
    let clock = ManualClock::new();
    let origins = origins(&clock, &[1, 1]);
    let admission = plan(&origins, &[(0, false), (0, true), (1, true)]);
    let first = admission.turn(0).unwrap().now_or_never();
    assert!(first.is_some(), "excused: its sibling waits for its permit");
    let first = first.unwrap().unwrap();
    let mut second = Box::pin(admission.turn(1).unwrap());
    let mut third = Box::pin(admission.turn(2).unwrap());
    assert!(second.as_mut().now_or_never().is_none());
    assert!(third.as_mut().now_or_never().is_none());
    assert_eq!(busy(&origins[1]), (0, 0), "origin 1 waits its turn");
    drop(first); // the first call is done
    assert!(second.now_or_never().unwrap().is_ok());
    assert!(third.now_or_never().unwrap().is_ok());
}

/// One request of `calls` (origin index, required) as a task: each
/// admitted call is done at once (its permits go back); `answered` is set
/// to whether every required call succeeded.
fn request(
    executor: &mut Executor,
    stages: Vec<(Origin, Option<Origin>)>,
    calls: &[(usize, bool)],
    criticality: Criticality,
    answered: Rc<Cell<Option<bool>>>,
) {
    let calls = calls.to_vec();
    executor.spawn(async move {
        let planned = calls
            .iter()
            .enumerate()
            .map(|(position, &(origin, required))| {
                let (local, budget) = &stages[origin];
                let probe = Rc::new(Cell::new(kit::Where::Unentered));
                let acquire = Staged::new(local, budget.as_ref(), Call::new(criticality), probe);
                Planned {
                    position,
                    origin,
                    required,
                    acquire,
                }
            });
        let admission = FanOutAdmission::new(planned);
        let admission = &admission;
        let futures = (0..calls.len())
            .map(|position| {
                let call = async move { admission.turn(position).unwrap().await.is_ok() };
                Some(Box::pin(call) as Pin<Box<dyn Future<Output = bool> + '_>>)
            })
            .collect();
        let required = calls.iter().map(|&(_, required)| required).collect();
        answered.set(Some(kit::until_decided(futures, required).await));
    });
}

/// The scenario: X holds b; R1 {a, b} (sheddable) holds a and
/// queues for b; R2 {a, b} (default) would have queued for b ahead of R1.
/// Without a budget (`budget: false`) both are plain limits of 1; with one,
/// a has a local limit of 2 under a fleet budget of 1 that R1 holds.
fn scenario(budget: bool) {
    let clock = ManualClock::new();
    let plain = origins(&clock, &[if budget { 2 } else { 1 }, 1]);
    let fleet = budget.then(|| origins(&clock, &[1]).remove(0));
    let stages = vec![(plain[0].clone(), fleet.clone()), (plain[1].clone(), None)];
    let x = plain[1].try_admit().unwrap();
    let mut executor = Executor::default();
    let (r1, r2) = (Rc::new(Cell::new(None)), Rc::new(Cell::new(None)));
    let both = [(0, true), (1, true)];
    request(
        &mut executor,
        stages.clone(),
        &both,
        Criticality::Sheddable,
        Rc::clone(&r1),
    );
    executor.run();
    request(
        &mut executor,
        stages,
        &both,
        Criticality::Default,
        Rc::clone(&r2),
    );
    executor.run();
    assert_eq!(
        busy(&plain[1]),
        (1, 1),
        "only R1 queues for b: R2 waits for a first"
    );
    if let Some(fleet) = &fleet {
        assert_eq!(
            busy(fleet),
            (1, 1),
            "R2 holds a's local permit, queued for its budget"
        );
    }
    drop(x);
    executor.run();
    assert_eq!(
        (r1.get(), r2.get()),
        (Some(true), Some(true)),
        "both answered, at once"
    );
    assert_eq!(executor.live(), 0);
    assert!(plain.iter().chain(&fleet).all(|o| busy(o) == (0, 0)));
}

#[test]
fn two_requests_reordered_by_criticality_never_hold_each_others_permits() {
    scenario(false);
}

#[test]
fn a_local_permit_and_a_budget_permit_are_taken_in_one_order() {
    scenario(true);
}
