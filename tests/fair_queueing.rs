#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! Fair queueing on the manual clock: closed-loop callers of several keys in
//! front of one limit, run millisecond by millisecond. A key that floods
//! only fills its own flow; quiet keys, keys of equal demand, a weighted key
//! and the keyless key each get what the contract promises; criticality
//! still outranks keys; a full queue gives up the heaviest key's waiter.

mod support;

use edgeshed::admission::{Admission, Admit, AdmitError, Call, Criticality, Policy};
use edgeshed::error::RateLimitReason;
use edgeshed::semaphore::Permit;
use edgeshed::time::ManualClock;
use std::task::Poll;
use std::time::Duration;
use support::poll_once;

const MS: Duration = Duration::from_millis(1);

/// One closed-loop caller: it calls, holds its permit for `service` ms,
/// then thinks for `think` ms and calls again.
struct Caller {
    key: Option<&'static str>,
    weight: u32,
    rank: Criticality,
    service: u64,
    think: u64,
    state: State,
    served: u64,
    refused: u64,
    /// Queue waits of served calls (ms).
    waits: Vec<u64>,
}

enum State {
    Thinking(u64),
    Waiting(Admit<ManualClock>, u64),
    Holding(Permit, u64),
}

impl Caller {
    fn new(key: Option<&'static str>, service: u64, think: u64) -> Self {
        Self {
            key,
            weight: 1,
            rank: Criticality::Default,
            service,
            think,
            state: State::Thinking(0),
            served: 0,
            refused: 0,
            waits: Vec::new(),
        }
    }

    fn call(&self) -> Call {
        let call = Call::new(self.rank).with_weight(self.weight);
        match self.key {
            Some(key) => call.with_key(key),
            None => call,
        }
    }

    /// One millisecond's step at `now`; `release` first returns permits due.
    fn step(&mut self, admission: &Admission<ManualClock>, now: u64, release: bool) {
        let state = std::mem::replace(&mut self.state, State::Thinking(now));
        self.state = match state {
            State::Holding(permit, until) if release && until <= now => {
                drop(permit);
                State::Thinking(now + self.think)
            }
            State::Thinking(at) if !release && at <= now => {
                let admit = admission.admit_call(self.call());
                self.poll(admit, now, now)
            }
            State::Waiting(admit, since) if !release => self.poll(admit, since, now),
            other => other,
        };
    }

    fn poll(&mut self, mut admit: Admit<ManualClock>, since: u64, now: u64) -> State {
        match poll_once(&mut admit) {
            Poll::Pending => State::Waiting(admit, since),
            Poll::Ready(Ok(permit)) => {
                self.served += 1;
                self.waits.push(now - since);
                State::Holding(permit, now + self.service)
            }
            Poll::Ready(Err(_)) => {
                self.refused += 1;
                State::Thinking(now + self.think.max(1))
            }
        }
    }

    fn success(&self) -> f64 {
        self.served as f64 / (self.served + self.refused).max(1) as f64
    }

    fn p99_wait(&self) -> u64 {
        let mut waits = self.waits.clone();
        waits.sort_unstable();
        waits
            .get(waits.len().saturating_sub(1) * 99 / 100)
            .copied()
            .unwrap_or(0)
    }
}

/// Runs `callers` for `ms` against `admission`, one millisecond a step:
/// permits due come back first, then every caller calls or polls.
fn run(admission: &Admission<ManualClock>, clock: &ManualClock, callers: &mut [Caller], ms: u64) {
    for now in 0..ms {
        for caller in callers.iter_mut() {
            caller.step(admission, now, true);
        }
        for caller in callers.iter_mut() {
            caller.step(admission, now, false);
        }
        clock.advance(MS);
    }
}

fn admission(limit: usize, queue: usize, timeout_ms: u64) -> (Admission<ManualClock>, ManualClock) {
    let clock = ManualClock::new();
    let policy = Policy::queue(queue, Duration::from_millis(timeout_ms));
    (Admission::new(limit, policy, clock.clone()).unwrap(), clock)
}

/// The scenario: limit 4, queue 16 (200 ms), 10 ms calls; a noisy
/// key with 40 closed-loop callers beside four quiet keys with one caller
/// each and 20 ms of think time.
fn noisy_beside_quiet(noisy_key: Option<&'static str>) {
    let (admission, clock) = admission(4, 16, 200);
    let quiet_keys = ["q1", "q2", "q3", "q4"];
    // The noisy callers step first each millisecond: they take any room
    // before a quiet arrival can (the adversarial order).
    let mut callers: Vec<Caller> = (0..40).map(|_| Caller::new(noisy_key, 10, 0)).collect();
    callers.extend(quiet_keys.iter().map(|&key| Caller::new(Some(key), 10, 20)));
    run(&admission, &clock, &mut callers, 5_000);
    let (noisy, quiet) = callers.split_at(40);
    for caller in quiet {
        assert!(
            caller.success() >= 0.95,
            "{:?}: {} served, {} refused",
            caller.key,
            caller.served,
            caller.refused
        );
        assert!(
            caller.p99_wait() <= 30,
            "{:?}: p99 wait {} ms",
            caller.key,
            caller.p99_wait()
        );
    }
    // Work-conserving: the noisy key gets the rest. Four slots of 10 ms for
    // 5 s are 2,000 calls; the quiet keys offer about 4 × 5000 / 30.
    let quiet_served: u64 = quiet.iter().map(|c| c.served).sum();
    let noisy_served: u64 = noisy.iter().map(|c| c.served).sum();
    assert!(
        quiet_served + noisy_served >= 1_950,
        "the slots stay busy: {quiet_served} + {noisy_served}"
    );
    assert!(
        noisy_served >= 1_200,
        "the noisy key gets the rest: {noisy_served}"
    );
}

#[test]
fn a_noisy_key_does_not_crowd_out_quiet_ones() {
    noisy_beside_quiet(Some("noisy"));
}

#[test]
fn a_keyless_flood_does_not_crowd_out_quiet_keys() {
    // Leaving the key out makes the flood one more key, not a way around.
    noisy_beside_quiet(None);
}

/// Jain's fairness index of `shares`: 1 when all are equal.
fn jain(shares: &[f64]) -> f64 {
    let sum: f64 = shares.iter().sum();
    let squares: f64 = shares.iter().map(|s| s * s).sum();
    sum * sum / (shares.len() as f64 * squares)
}

#[test]
fn keys_of_equal_demand_above_capacity_get_equal_service() {
    // Ten keys, unequal numbers of callers (1 to 10 each): the demand of
    // each is above its share of the limit, so each should get a tenth.
    let (admission, clock) = admission(5, 32, 500);
    const KEYS: [&str; 10] = ["k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9"];
    let mut callers = Vec::new();
    for (i, &key) in KEYS.iter().enumerate() {
        callers.extend((0..=i).map(|_| Caller::new(Some(key), 7, 0)));
    }
    run(&admission, &clock, &mut callers, 6_000);
    let shares: Vec<f64> = KEYS
        .iter()
        .map(|&key| {
            let served: u64 = callers
                .iter()
                .filter(|c| c.key == Some(key))
                .map(|c| c.served)
                .sum();
            served as f64
        })
        .collect();
    let index = jain(&shares);
    assert!(index >= 0.95, "Jain's index {index:.3} over {shares:?}");
}

#[test]
fn a_weighted_key_gets_its_weights_share() {
    let (admission, clock) = admission(6, 32, 500);
    let mut callers: Vec<Caller> = (0..12).map(|_| Caller::new(Some("basic"), 10, 0)).collect();
    callers.extend((0..12).map(|_| {
        let mut caller = Caller::new(Some("paying"), 10, 0);
        caller.weight = 2;
        caller
    }));
    run(&admission, &clock, &mut callers, 6_000);
    let served = |key| -> u64 {
        callers
            .iter()
            .filter(|c| c.key == Some(key))
            .map(|c| c.served)
            .sum()
    };
    let ratio = served("paying") as f64 / served("basic") as f64;
    assert!((1.8..=2.2).contains(&ratio), "paying / basic = {ratio:.3}");
}

#[test]
fn criticality_still_outranks_keys() {
    let (admission, _clock) = admission(2, 16, 500);
    let admit = |rank, key| admission.admit_call(Call::new(rank).with_key(key));
    let mut held: Vec<Permit> = (0..2)
        .map(
            |_| match poll_once(&mut admit(Criticality::Critical, "vip")) {
                Poll::Ready(Ok(permit)) => permit,
                other => panic!("{other:?}"),
            },
        )
        .collect();
    let mut batch = admit(Criticality::Sheddable, "batch");
    assert!(poll_once(&mut batch).is_pending());
    // vip holds 2 of 2 with batch waiting, but batch waits at a lower rank,
    // where it would not be served first anyway: vip queues, no 429.
    let mut vip = admit(Criticality::Critical, "vip");
    assert!(poll_once(&mut vip).is_pending());
    drop(held.pop());
    let Poll::Ready(Ok(_vip_permit)) = poll_once(&mut vip) else {
        panic!("the critical waiter first, although its key holds the most");
    };
    assert!(poll_once(&mut batch).is_pending());
    drop(held);
    assert!(matches!(poll_once(&mut batch), Poll::Ready(Ok(_))));
}

#[test]
fn a_full_queue_gives_up_the_heaviest_keys_newest_waiter() {
    let (admission, _clock) = admission(2, 3, 500);
    let call = |key: &'static str| Call::new(Criticality::Default).with_key(key);
    let admit = |key| admission.admit_call(call(key));
    let held: Vec<Permit> = (0..2)
        .map(|_| match poll_once(&mut admit("heavy")) {
            Poll::Ready(Ok(permit)) => permit,
            other => panic!("{other:?}"),
        })
        .collect();
    let mut heavy_old = admit("heavy");
    let mut heavy_new = admit("heavy");
    let mut medium = admit("medium");
    for waiting in [&mut heavy_old, &mut heavy_new, &mut medium] {
        assert!(poll_once(waiting).is_pending());
    }
    // Full: heavy holds 2 + 2 waiting, medium 1 waiting, light nothing.
    let mut light = admit("light");
    assert!(
        poll_once(&mut light).is_pending(),
        "room was made for the light key"
    );
    match poll_once(&mut heavy_new) {
        Poll::Ready(Err(AdmitError::RateLimited(limited))) => {
            assert_eq!(limited.reason(), RateLimitReason::FairShare)
        }
        other => panic!("the heaviest key's newest waiter is given up, got {other:?}"),
    }
    assert!(poll_once(&mut heavy_old).is_pending());
    assert!(poll_once(&mut medium).is_pending());
    // A call of the heaviest key itself finds no one to give up: refused.
    match poll_once(&mut admit("heavy")) {
        Poll::Ready(Err(AdmitError::RateLimited(limited))) => {
            // Over its share (2 of 2 held, three keys active) while others wait.
            assert_eq!(limited.reason(), RateLimitReason::FairShare)
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(admission.stats().fair_share_refused, 2);
    drop(held);
}

#[test]
fn omitting_the_key_does_not_jump_ahead_of_a_keyed_waiter() {
    // The check: key a holds all 4 slots and key b waits; calls
    // without a key used to be served ahead of b and never refused.
    let (admission, _clock) = admission(4, 16, 500);
    let held: Vec<Permit> = (0..4)
        .map(
            |_| match poll_once(&mut admission.admit_call(Call::default().with_key("a"))) {
                Poll::Ready(Ok(permit)) => permit,
                other => panic!("{other:?}"),
            },
        )
        .collect();
    let mut b = admission.admit_call(Call::default().with_key("b"));
    assert!(poll_once(&mut b).is_pending());
    let mut keyless: Vec<Admit<ManualClock>> = (0..3).map(|_| admission.admit()).collect();
    for waiting in &mut keyless {
        assert!(poll_once(waiting).is_pending());
    }
    let mut held = held;
    drop(held.pop());
    let Poll::Ready(Ok(_b_permit)) = poll_once(&mut b) else {
        panic!("b first: it waited first");
    };
    for waiting in &mut keyless {
        let polled = poll_once(waiting);
        assert!(polled.is_pending(), "{polled:?} {:?}", admission.stats());
    }
    // The keyless key is a key: once it holds its share while others wait,
    // it is refused with 429 as any key is.
    drop(held.pop());
    drop(held.pop());
    let served: Vec<Permit> = keyless
        .iter_mut()
        .filter_map(|waiting| match poll_once(waiting) {
            Poll::Ready(Ok(permit)) => Some(permit),
            _ => None,
        })
        .collect();
    assert_eq!(served.len(), 2);
    let mut c = admission.admit_call(Call::default().with_key("c"));
    assert!(poll_once(&mut c).is_pending());
    match poll_once(&mut admission.admit()) {
        Poll::Ready(Err(AdmitError::RateLimited(limited))) => {
            assert_eq!(limited.reason(), RateLimitReason::FairShare)
        }
        other => panic!("the keyless key over its share is refused, got {other:?}"),
    }
}

#[test]
fn a_share_under_one_permit_still_lets_a_key_queue_beside_its_one_call() {
    // Limit 2 and three keys: every share is 2/3 of a permit. Rounded
    // down, a key holding its one call would be over it and refused 429
    // for a second call while another key waits (the tenants bench's quiet
    // tenants at level 0); rounded up, a key may hold one permit and queue
    // for more, served after the keys that hold less.
    let (admission, _clock) = admission(2, 8, 500);
    let admit_now = |key| match poll_once(&mut admission.admit_call(Call::default().with_key(key)))
    {
        Poll::Ready(Ok(permit)) => permit,
        other => panic!("{key}: {other:?}"),
    };
    let a = admit_now("a");
    let _b = admit_now("b");
    let mut c = admission.admit_call(Call::default().with_key("c"));
    assert!(poll_once(&mut c).is_pending());
    let mut a_again = admission.admit_call(Call::default().with_key("a"));
    let polled = poll_once(&mut a_again);
    assert!(
        polled.is_pending(),
        "a holds one permit, its share rounded up: {polled:?}"
    );
    assert_eq!(
        admission.stats().fair_share_refused,
        0,
        "{:?}",
        admission.stats()
    );
    drop(a);
    let Poll::Ready(Ok(_c_permit)) = poll_once(&mut c) else {
        panic!("c holds nothing: served first");
    };
    assert!(poll_once(&mut a_again).is_pending());
}
