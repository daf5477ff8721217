#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! Criticality in the core: the shed order, the reserves at small limits,
//! the queue order, and displacement from a full queue — on the manual
//! clock, without sleeps.

mod support;

use edgeshed::admission::{
    Admission, Admit, AdmitError, Call, Criticality, Options, Policy, Reserve,
};
use edgeshed::error::OverloadCause;
use edgeshed::semaphore::Permit;
use edgeshed::time::ManualClock;
use std::task::Poll;
use std::time::Duration;
use support::{poll_once, CountingWaker};
use Criticality::{Critical, Default, Sheddable};

const MS: Duration = Duration::from_millis(1);

fn admission(limit: usize, policy: Policy, reserve: Reserve) -> Admission<ManualClock> {
    let options = Options::new().reserve(reserve);
    Admission::with_options(limit, policy, options, ManualClock::new()).unwrap()
}

fn queue(max_queue: usize) -> Policy {
    Policy::queue(max_queue, 100 * MS)
}

/// Admits `criticality` calls without waiting until one is refused.
fn fill(admission: &Admission<ManualClock>, criticality: Criticality) -> Vec<Permit> {
    std::iter::from_fn(|| admission.try_admit_as(criticality)).collect()
}

/// Starts a queued admission of `criticality`; it must be pending.
#[track_caller]
fn wait(admission: &Admission<ManualClock>, criticality: Criticality) -> Admit<ManualClock> {
    let mut admit = admission.admit_call(Call::new(criticality));
    assert!(
        poll_once(&mut admit).is_pending(),
        "{criticality} should wait"
    );
    admit
}

#[track_caller]
fn cause(outcome: Poll<Result<Permit, AdmitError>>) -> OverloadCause {
    match outcome {
        Poll::Ready(Err(AdmitError::Overloaded(overloaded))) => overloaded.cause(),
        other => panic!("expected an Overloaded refusal, got {other:?}"),
    }
}

#[test]
fn the_reserves_give_7_9_10_of_10_and_shed_the_lower_criticalities_first() {
    let admission = admission(10, Policy::Shed, Reserve::default());
    // A critical call in flight: the reserves bind (they are lent only
    // while no more critical call is present or was seen lately).
    let first_critical = fill(&admission, Critical)
        .into_iter()
        .take(1)
        .collect::<Vec<_>>();
    let sheddable = fill(&admission, Sheddable);
    assert_eq!(
        sheddable.len(),
        6,
        "sheddable calls stop at 7 of 10 in flight"
    );
    let default = fill(&admission, Default);
    assert_eq!(default.len(), 2, "default calls go on to 9");
    // Now a sheddable and a default call are refused, a critical one is not.
    for refused in [Sheddable, Default] {
        let outcome = poll_once(&mut admission.admit_call(Call::new(refused)));
        assert_eq!(cause(outcome), OverloadCause::Shed, "{refused}");
    }
    let critical = fill(&admission, Critical);
    assert_eq!(critical.len(), 1, "the last slot is critical's");
    let stats = admission.stats();
    assert_eq!(stats.in_flight, 10);
    let by = stats.by_criticality;
    assert_eq!(
        (
            by.sheddable.in_flight,
            by.default.in_flight,
            by.critical.in_flight
        ),
        (6, 2, 2)
    );
    drop(first_critical);
    assert_eq!(
        (by.sheddable.shed, by.default.shed, by.critical.shed),
        (1, 1, 0)
    );
    assert_eq!(stats.shed, 2);
}

#[test]
fn a_call_is_refused_only_when_every_lower_criticality_would_be_refused_too() {
    // For each limit and each mix already in flight: if a call of some
    // criticality is refused, every lower criticality is refused too.
    for limit in 1..=12 {
        let admission = admission(limit, Policy::Shed, Reserve::default());
        let mut held = Vec::new();
        for next in [Critical, Default, Sheddable]
            .into_iter()
            .cycle()
            .take(3 * limit)
        {
            let admits = Criticality::ALL.map(|c| {
                let permit = admission.try_admit_as(c);
                let admitted = permit.is_some();
                drop(permit);
                admitted
            });
            // ALL is most critical first: once one is refused, the rest are.
            let first_refused = admits.iter().position(|admitted| !admitted);
            if let Some(first) = first_refused {
                assert!(
                    admits[first..].iter().all(|admitted| !admitted),
                    "limit {limit}, {} in flight: {admits:?}",
                    held.len()
                );
            }
            held.extend(admission.try_admit_as(next));
        }
        assert_eq!(held.len(), limit, "critical calls fill the limit");
    }
}

#[test]
fn the_ceilings_at_small_limits_are_1_1_1_then_1_1_2_then_2_2_3() {
    for (limit, ceilings) in [
        (1, [1, 1, 1]),
        (2, [1, 1, 2]),
        (3, [2, 2, 3]),
        (10, [7, 9, 10]),
    ] {
        for (criticality, ceiling) in [Sheddable, Default, Critical].into_iter().zip(ceilings) {
            let admission = admission(limit, Policy::Shed, Reserve::default());
            assert_eq!(
                fill(&admission, criticality).len(),
                ceiling,
                "limit {limit}, {criticality}"
            );
        }
    }
    // Limit 1: any call may take the one slot when it is free.
    let one = admission(1, Policy::Shed, Reserve::default());
    let held = one.try_admit_as(Sheddable).unwrap();
    assert!(
        one.try_admit_as(Critical).is_none(),
        "no slot left, not even for critical"
    );
    drop(held);
    assert!(one.try_admit_as(Default).is_some());
    // Limit 2: the sheddable and default calls share one slot; critical keeps one.
    let two = admission(2, Policy::Shed, Reserve::default());
    let batch = two.try_admit_as(Sheddable).unwrap();
    assert!(two.try_admit_as(Default).is_none());
    assert!(two.try_admit_as(Critical).is_some());
    drop(batch);
}

#[test]
fn without_a_reserve_every_criticality_may_use_the_whole_limit() {
    let admission = admission(4, Policy::Shed, Reserve::NONE);
    assert_eq!(fill(&admission, Sheddable).len(), 4);
    let plain = Admission::shed(4).unwrap();
    let all: Vec<Permit> = std::iter::from_fn(|| plain.try_admit_as(Sheddable)).collect();
    assert_eq!(
        all.len(),
        4,
        "an admission built without options has no reserve"
    );
}

#[test]
fn the_queue_serves_higher_criticalities_first_and_fifo_within_one() {
    let admission = admission(1, queue(8), Reserve::NONE);
    let mut holder = admission.try_admit().unwrap();
    let order = [Sheddable, Default, Critical, Sheddable, Default, Critical];
    let mut waiting: Vec<(usize, Admit<ManualClock>)> = order
        .iter()
        .enumerate()
        .map(|(id, &c)| (id, wait(&admission, c)))
        .collect();
    let mut served = Vec::new();
    while !waiting.is_empty() {
        drop(holder);
        let (at, id, permit) = waiting
            .iter_mut()
            .enumerate()
            .find_map(|(at, (id, admit))| match poll_once(admit) {
                Poll::Ready(outcome) => Some((at, *id, outcome.unwrap())),
                Poll::Pending => None,
            })
            .expect("the returned permit went to a waiter");
        drop(waiting.remove(at));
        served.push(id);
        holder = permit;
        for (_, admit) in &mut waiting {
            assert!(
                poll_once(admit).is_pending(),
                "one permit, one waiter served"
            );
        }
    }
    assert_eq!(served, [2, 5, 1, 4, 0, 3]);
}

#[test]
fn a_full_queue_lets_an_arrival_displace_the_newest_waiter_of_the_lowest_criticality_below() {
    let admission = admission(1, queue(3), Reserve::NONE);
    let holder = admission.try_admit().unwrap();
    let mut old_batch = wait(&admission, Sheddable);
    let new_batch_waker = CountingWaker::new();
    let mut new_batch = admission.admit_call(Call::new(Sheddable));
    assert!(new_batch_waker.poll(&mut new_batch).is_pending());
    let mut default = wait(&admission, Default);

    // Full (3 of 3). A critical arrival displaces the newest sheddable waiter.
    let mut critical = wait(&admission, Critical);
    assert_eq!(new_batch_waker.count(), 1, "the displaced waiter is woken");
    assert_eq!(cause(poll_once(&mut new_batch)), OverloadCause::Displaced);
    // Its place went to the arrival; no permit moved anywhere.
    let stats = admission.stats();
    assert_eq!((stats.in_flight, stats.queued, stats.displaced), (1, 3, 1));
    assert_eq!(stats.by_criticality.sheddable.displaced, 1);
    assert_eq!(admission.semaphore().available_permits(), 0);
    assert!(poll_once(&mut old_batch).is_pending());
    assert!(poll_once(&mut default).is_pending());

    // A default arrival displaces the last sheddable one; a sheddable arrival
    // has nobody below it and is shed ("limit").
    let mut second_default = wait(&admission, Default);
    assert_eq!(cause(poll_once(&mut old_batch)), OverloadCause::Displaced);
    let shed = poll_once(&mut admission.admit_call(Call::new(Sheddable)));
    assert_eq!(cause(shed), OverloadCause::Shed);
    // A critical arrival now displaces the newest default waiter.
    let mut second_critical = wait(&admission, Critical);
    assert_eq!(
        cause(poll_once(&mut second_default)),
        OverloadCause::Displaced
    );
    let by = admission.stats().by_criticality;
    assert_eq!(
        (
            by.sheddable.displaced,
            by.default.displaced,
            by.critical.displaced
        ),
        (2, 1, 0)
    );
    assert_eq!(by.sheddable.shed, 1);

    // The permit, when it comes back, goes to the first critical waiter.
    drop(holder);
    assert!(poll_once(&mut default).is_pending());
    let permit = match poll_once(&mut critical) {
        Poll::Ready(outcome) => outcome.unwrap(),
        Poll::Pending => panic!("the oldest critical waiter is served first"),
    };
    assert_eq!(permit.criticality(), Critical);
    drop(permit);
    assert!(poll_once(&mut second_critical).is_ready());
    drop(second_critical);
    drop(default);
    let stats = admission.stats();
    assert_eq!((stats.in_flight, stats.queued), (0, 0));
    assert_eq!(
        admission.semaphore().available_permits(),
        1,
        "every permit is back"
    );
}

#[test]
fn a_waiter_kept_out_by_its_reserve_waits_while_critical_calls_get_the_free_slots() {
    let admission = admission(10, queue(4), Reserve::default());
    let mut batch = fill(&admission, Sheddable); // 7
    let mut default = fill(&admission, Default); // 2 more
    let mut waiting = wait(&admission, Sheddable);
    drop(default.pop()); // 8 in flight: still at the sheddable ceiling and above
    assert!(poll_once(&mut waiting).is_pending());
    assert_eq!(
        admission.semaphore().available_permits(),
        2,
        "free, but not for sheddable calls"
    );
    // A critical call does not queue behind it.
    let critical = admission
        .try_admit_as(Critical)
        .expect("critical overtakes a sheddable waiter");
    drop(critical);
    drop(batch.pop()); // 7 in flight: still not under the ceiling of 7
    assert!(poll_once(&mut waiting).is_pending());
    drop(batch.pop()); // 6 in flight: the waiter may go
    let Poll::Ready(Ok(admitted)) = poll_once(&mut waiting) else {
        panic!("the sheddable waiter is admitted under its ceiling");
    };
    assert_eq!(admission.stats().by_criticality.sheddable.in_flight, 6);
    drop((admitted, batch, default));
    assert_eq!(admission.stats().in_flight, 0);
}

#[test]
fn the_reserves_follow_the_limit_an_adaptive_controller_sets() {
    let admission = admission(10, Policy::Shed, Reserve::default());
    admission.semaphore().set_limit(2);
    let first = fill(&admission, Sheddable);
    assert_eq!(first.len(), 1, "limit 2: sheddable gets 1");
    admission.semaphore().set_limit(20);
    // 14 sheddable in all at limit 20 (0.7 × 20).
    let more = fill(&admission, Sheddable);
    assert_eq!(first.len() + more.len(), 14);
}

#[test]
fn setting_a_reserve_on_a_running_admission_lets_waiters_in_when_it_loosens() {
    let admission = admission(4, queue(2), Reserve::default());
    let _critical = admission.try_admit_as(Critical).unwrap(); // the reserve binds
    let _batch = fill(&admission, Sheddable); // 2 of 4 in flight (0.7 × 4 = 2.8)
    let mut waiting = wait(&admission, Sheddable);
    assert_eq!(admission.semaphore().available_permits(), 2);
    admission.set_reserve(Reserve::NONE);
    assert!(
        matches!(poll_once(&mut waiting), Poll::Ready(Ok(_))),
        "admitted at once"
    );
    assert_eq!(admission.reserve(), Reserve::NONE);
}

#[test]
fn a_reserve_is_lent_while_no_more_critical_call_needs_it() {
    // The case: a limit of 3 with the default reserve (a route
    // elsewhere names a criticality) whose calls are all default admitted 2.
    let admission = admission(3, Policy::Shed, Reserve::default());
    let admit = |rank| poll_once(&mut admission.admit_call(Call::new(rank)));
    let mut held: Vec<Permit> = (0..3)
        .map(|_| match admit(Default) {
            Poll::Ready(Ok(permit)) => permit,
            other => panic!("all three default calls get in: {other:?}"),
        })
        .collect();
    assert_eq!(admission.stats().in_flight, 3);
    // Stats say so: default's reserve is lent; sheddable's is not (default
    // calls, more critical, hold permits); critical has nothing to borrow.
    let lent = |admission: &Admission<ManualClock>| {
        let by = admission.stats().by_criticality;
        (by.critical.lent, by.default.lent, by.sheddable.lent)
    };
    assert_eq!(lent(&admission), (false, true, false));
    // A critical call finds them lent out: refused, and the loan ends.
    assert_eq!(cause(admit(Critical)), OverloadCause::Shed);
    assert_eq!(lent(&admission), (false, false, false), "the loan ended");
    drop(held.pop());
    assert_eq!(
        cause(admit(Default)),
        OverloadCause::Shed,
        "the slot is kept again"
    );
    let critical = match admit(Critical) {
        Poll::Ready(Ok(permit)) => permit,
        other => panic!("the kept slot is critical's: {other:?}"),
    };
    drop(critical);
    // After a quiet spell (4 × the limit = 12 locked-path arrivals without
    // a critical call present or seen: the critical call's take, lock-free,
    // was a sight, so the spell starts after it), the reserve is lent again.
    for _ in 0..11 {
        assert_eq!(cause(admit(Default)), OverloadCause::Shed);
    }
    assert!(
        matches!(admit(Default), Poll::Ready(Ok(_))),
        "lent after 12 quiet arrivals"
    );
    assert_eq!(lent(&admission), (false, true, false));
}

#[test]
fn a_brief_critical_call_that_never_waited_keeps_the_reserve_from_being_lent() {
    // Critical calls that come and go on the lock-free path are sights too:
    // the sheddable calls after one stay within their ceiling (limit 10:
    // 7), instead of borrowing the slots kept for the next critical call.
    let admission = admission(10, Policy::Shed, Reserve::default());
    let admit = |rank| poll_once(&mut admission.admit_call(Call::new(rank)));
    match admit(Critical) {
        Poll::Ready(Ok(permit)) => drop(permit),
        other => panic!("a critical call on an idle limit gets in: {other:?}"),
    }
    let mut held = Vec::new();
    while let Poll::Ready(Ok(permit)) = admit(Sheddable) {
        held.push(permit);
    }
    assert_eq!(
        held.len(),
        7,
        "the sheddable ceiling holds after a critical call"
    );
    assert!(
        matches!(admit(Critical), Poll::Ready(Ok(_))),
        "the kept slots are there for the next critical call"
    );
}
