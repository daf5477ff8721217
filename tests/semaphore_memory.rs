#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! Memory after a burst: the waiter queue's storage grows with a burst and
//! shrinks back to the live waiters once it drains, whether the waiters were
//! admitted, dropped or timed out, and while new waiters keep arriving.

mod support;

use edgeshed::admission::{Admission, Policy};
use edgeshed::semaphore::{Acquire, Permit, Semaphore};
use edgeshed::time::ManualClock;
use std::task::Poll;
use std::time::Duration;
use support::poll_once;

const BURST: usize = 100_000;

/// What "small again" means: a few dozen entries, whatever the peak was.
const SMALL: usize = 256;

#[track_caller]
fn queued(semaphore: &Semaphore) -> Acquire {
    let mut acquire = semaphore.acquire();
    assert!(poll_once(&mut acquire).is_pending(), "expected to queue");
    acquire
}

#[track_caller]
fn permit(acquire: &mut Acquire) -> Permit {
    match poll_once(acquire) {
        Poll::Ready(Ok(permit)) => permit,
        other => panic!("expected a permit, got {other:?}"),
    }
}

#[test]
fn a_burst_of_100_000_admitted_or_dropped_waiters_leaves_a_small_queue() {
    let semaphore = Semaphore::new(1);
    let mut held = semaphore.try_acquire().unwrap();
    let mut waiting: Vec<Acquire> = (0..BURST).map(|_| queued(&semaphore)).collect();
    assert_eq!(semaphore.waiters(), BURST);
    let peak = semaphore.queue_capacity();
    assert!(peak >= BURST, "the queue grew to {peak}");

    // The first half is admitted in FIFO order, the rest is dropped.
    for acquire in &mut waiting[..BURST / 2] {
        drop(held);
        held = permit(acquire);
    }
    waiting.truncate(BURST / 2);
    assert_eq!(semaphore.waiters(), 0);
    drop(held);
    assert!(
        semaphore.queue_capacity() <= SMALL,
        "capacity {} after the burst drained (peak {peak})",
        semaphore.queue_capacity()
    );

    // Still a working semaphore.
    assert_eq!(semaphore.available_permits(), 1);
    let held = semaphore.try_acquire().unwrap();
    let mut next = queued(&semaphore);
    drop(held);
    drop(permit(&mut next));
    assert_eq!(semaphore.available_permits(), 1);
}

#[test]
fn a_burst_drained_under_continued_load_shrinks_to_the_live_waiters() {
    let semaphore = Semaphore::new(1);
    let mut held = semaphore.try_acquire().unwrap();
    let mut burst: Vec<Acquire> = (0..BURST).map(|_| queued(&semaphore)).collect();
    // Ten newcomers arrive while the burst drains; the first one lands at
    // the very end of the slab (no slot was free yet).
    let mut newcomers = Vec::new();
    for (index, acquire) in burst.iter_mut().enumerate() {
        if index % (BURST / 10) == 0 {
            newcomers.push(queued(&semaphore));
        }
        drop(held);
        held = permit(acquire);
    }
    drop(burst);
    assert_eq!(semaphore.waiters(), newcomers.len());
    // The load goes on: each newcomer served is replaced by a fresh one.
    let mut fresh = Vec::new();
    for acquire in &mut newcomers {
        fresh.push(queued(&semaphore));
        drop(held);
        held = permit(acquire);
    }
    assert_eq!(semaphore.waiters(), fresh.len());
    assert!(
        semaphore.queue_capacity() <= SMALL,
        "capacity {} for {} live waiters",
        semaphore.queue_capacity(),
        fresh.len()
    );
    // The fresh waiters kept their places, in FIFO order.
    for acquire in &mut fresh {
        drop(held);
        held = permit(acquire);
    }
    drop(held);
    assert_eq!(semaphore.available_permits(), 1);
    assert_eq!(semaphore.waiters(), 0);
}

#[test]
fn a_burst_of_100_000_queue_timeouts_leaves_a_small_queue() {
    let clock = ManualClock::new();
    let policy = Policy::queue(BURST, Duration::from_millis(50));
    let admission = Admission::new(1, policy, clock.clone()).unwrap();
    let held = admission.try_admit().unwrap();
    let mut waiting: Vec<_> = (0..BURST).map(|_| admission.admit()).collect();
    for admit in &mut waiting {
        assert!(poll_once(admit).is_pending());
    }
    assert_eq!(admission.stats().queued, BURST);
    assert!(admission.semaphore().queue_capacity() >= BURST);

    clock.advance(Duration::from_millis(50));
    for admit in &mut waiting {
        assert!(matches!(poll_once(admit), Poll::Ready(Err(_))));
    }
    assert_eq!(admission.stats().queue_timeouts, BURST as u64);
    assert_eq!(admission.stats().queued, 0);
    assert!(
        admission.semaphore().queue_capacity() <= SMALL,
        "capacity {}",
        admission.semaphore().queue_capacity()
    );
    drop(held);
}
