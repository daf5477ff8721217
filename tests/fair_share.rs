#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! The per-key fair share of the concurrency limit: the 429 rule, the grant
//! order between keys, work conservation, and memory bounded by the calls
//! in flight and waiting.

mod support;

use edgeshed::admission::{Admission, Admit, AdmitError, Call, Criticality, Policy};
use edgeshed::error::RateLimitReason;
use edgeshed::semaphore::Permit;
use edgeshed::time::ManualClock;
use std::task::Poll;
use std::time::Duration;
use support::poll_once;

fn admission(limit: usize) -> Admission<ManualClock> {
    let policy = Policy::queue(16, Duration::from_millis(100));
    Admission::new(limit, policy, ManualClock::new()).unwrap()
}

fn call(key: &str) -> Call {
    Call::new(Criticality::Default).with_key(key)
}

#[track_caller]
fn admit_now(admission: &Admission<ManualClock>, key: &str) -> Permit {
    match poll_once(&mut admission.admit_call(call(key))) {
        Poll::Ready(Ok(permit)) => permit,
        other => panic!("{key}: expected admission at once, got {other:?}"),
    }
}

#[track_caller]
fn wait(admission: &Admission<ManualClock>, key: &str) -> Admit<ManualClock> {
    let mut admit = admission.admit_call(call(key));
    assert!(poll_once(&mut admit).is_pending(), "{key} should wait");
    admit
}

#[track_caller]
fn refused_fair_share(admission: &Admission<ManualClock>, key: &str) {
    match poll_once(&mut admission.admit_call(call(key))) {
        Poll::Ready(Err(AdmitError::RateLimited(limited))) => {
            assert_eq!(limited.reason(), RateLimitReason::FairShare);
            assert_eq!(limited.retry_after(), None);
        }
        other => panic!("{key}: expected a fair-share refusal, got {other:?}"),
    }
}

#[test]
fn a_key_alone_may_use_the_whole_limit() {
    let admission = admission(4);
    let held: Vec<Permit> = (0..4).map(|_| admit_now(&admission, "noisy")).collect();
    // Nobody else waits: the next noisy call queues (503 later), it is no 429.
    let mut next = wait(&admission, "noisy");
    assert_eq!(admission.stats().fair_share_refused, 0);
    drop(held);
    assert!(matches!(poll_once(&mut next), Poll::Ready(Ok(_))));
}

#[test]
fn a_key_over_its_share_is_refused_with_429_while_another_key_waits() {
    let admission = admission(4);
    let noisy: Vec<Permit> = (0..4).map(|_| admit_now(&admission, "noisy")).collect();
    let mut quiet = wait(&admission, "quiet");
    // Two active keys: the share is 4 / 2 = 2; noisy holds 4.
    refused_fair_share(&admission, "noisy");
    assert_eq!(admission.stats().fair_share_refused, 1);
    // An unkeyed call is not part of the fair share: it queues.
    let mut unkeyed = admission.admit();
    assert!(poll_once(&mut unkeyed).is_pending());
    // The quiet key is under its share: the next free slot is its.
    drop(noisy);
    assert!(matches!(poll_once(&mut quiet), Poll::Ready(Ok(_))));
    assert!(matches!(poll_once(&mut unkeyed), Poll::Ready(Ok(_))));
}

#[test]
fn a_key_under_its_share_is_served_before_an_earlier_waiter_over_it() {
    let admission = admission(4);
    let noisy: Vec<Permit> = (0..2).map(|_| admit_now(&admission, "noisy")).collect();
    let mut quiet: Vec<Permit> = (0..2).map(|_| admit_now(&admission, "quiet")).collect();
    // noisy holds 2 = its share (4 / 2): it is not refused, it queues first.
    let mut noisy_waiting = wait(&admission, "noisy");
    let mut late = wait(&admission, "late"); // a third key, holding nothing
    drop(quiet.pop());
    // Three active keys, share 4/3: "late" holds 0, noisy 2 (over).
    let Poll::Ready(Ok(late_permit)) = poll_once(&mut late) else {
        panic!("the key under its share is served first");
    };
    assert!(poll_once(&mut noisy_waiting).is_pending());
    // Work-conserving: nobody under its share waits now, so the next slot is noisy's.
    drop(quiet.pop());
    let Poll::Ready(Ok(noisy_permit)) = poll_once(&mut noisy_waiting) else {
        panic!("a free slot never stays empty while a call waits");
    };
    assert_eq!(admission.stats().in_flight, 4);
    drop((noisy, late_permit, noisy_permit));
    assert_eq!(admission.semaphore().active_keys(), 0);
}

#[test]
fn a_key_served_lately_waits_behind_a_burst_even_holding_fewer_at_that_instant() {
    // The noisy-tenant bench's loss: ranked by the permits held at the
    // instant a permit frees, a flood holding fewer than a quiet key's
    // burst took the permit the burst's last call waited for.
    let admission = admission(4);
    let mut noisy: Vec<Permit> = (0..4).map(|_| admit_now(&admission, "noisy")).collect();
    for _ in 0..8 {
        drop(noisy.pop());
        noisy.push(admit_now(&admission, "noisy"));
    }
    // The flood has had 12 permits lately; it holds 4 and queues once more.
    let mut noisy_waiting = wait(&admission, "noisy");
    let mut burst: Vec<Admit<ManualClock>> = (0..2).map(|_| wait(&admission, "quiet")).collect();
    let mut quiet = Vec::new();
    for waiter in &mut burst {
        drop(noisy.pop());
        let Poll::Ready(Ok(permit)) = poll_once(waiter) else {
            panic!("the quiet key, served least lately, is served first");
        };
        quiet.push(permit);
    }
    // quiet holds 2 and queues a third call; noisy holds 2, then 1.
    let mut third = wait(&admission, "quiet");
    drop(noisy.pop());
    assert_eq!(admission.semaphore().active_keys(), 2);
    let Poll::Ready(Ok(permit)) = poll_once(&mut third) else {
        panic!("the burst's third call loses the permit to the flood holding 1 to its 2");
    };
    assert!(poll_once(&mut noisy_waiting).is_pending());
    // Work-conserving: the next free permit is the flood's.
    drop(permit);
    assert!(matches!(poll_once(&mut noisy_waiting), Poll::Ready(Ok(_))));
    drop((noisy, quiet));
}

#[test]
fn keys_are_forgotten_once_they_hold_and_wait_for_nothing() {
    let admission = admission(8);
    for round in 0..10_000 {
        let key = format!("client-{round}");
        let permit = admit_now(&admission, &key);
        assert_eq!(admission.semaphore().active_keys(), 1);
        drop(permit);
        assert_eq!(admission.semaphore().active_keys(), 0, "{key} is forgotten");
    }
    let held: Vec<Permit> = (0..8)
        .map(|i| admit_now(&admission, &format!("held-{i}")))
        .collect();
    let waiting: Vec<Admit<ManualClock>> = (0..16)
        .map(|i| wait(&admission, &format!("w-{i}")))
        .collect();
    assert_eq!(admission.semaphore().active_keys(), 24);
    drop(waiting);
    drop(held);
    assert_eq!(admission.semaphore().active_keys(), 0);
    assert!(
        admission.semaphore().queue_capacity() <= 200,
        "the key table shrinks back: {}",
        admission.semaphore().queue_capacity()
    );
}

#[test]
fn an_arrival_that_displaces_a_waiter_of_its_own_key_keeps_the_key_counted() {
    // Found by tests/proptest_criticality.rs: the displaced waiter was the
    // key's last call, so its key was forgotten under the arrival's feet.
    let policy = Policy::queue(1, Duration::from_millis(50));
    let admission = Admission::new(1, policy, ManualClock::new()).unwrap();
    let held = admission.try_admit().unwrap();
    let mut batch = admission.admit_call(Call::new(Criticality::Sheddable).with_key("k"));
    assert!(poll_once(&mut batch).is_pending());
    let mut urgent = admission.admit_call(Call::new(Criticality::Critical).with_key("k"));
    assert!(poll_once(&mut urgent).is_pending());
    assert!(matches!(
        poll_once(&mut batch),
        Poll::Ready(Err(AdmitError::Overloaded(_)))
    ));
    assert_eq!(admission.semaphore().active_keys(), 1, "k still waits");
    drop(held);
    let Poll::Ready(Ok(permit)) = poll_once(&mut urgent) else {
        panic!("urgent is admitted")
    };
    assert_eq!(admission.semaphore().active_keys(), 1, "k holds a permit");
    drop(permit);
    assert_eq!(admission.semaphore().active_keys(), 0);
}
