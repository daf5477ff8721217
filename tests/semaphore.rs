#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! The runtime-free semaphore: FIFO hand-over, one wake per release,
//! cancellation safety, close and resize.

mod support;

use edgeshed::semaphore::{Acquire, AcquireError, Permit, Semaphore, TryAcquireError};
use std::task::Poll;
use support::{poll_once, CountingWaker};

/// A queued acquire together with the waker it registered.
struct Waiter {
    acquire: Acquire,
    waker: CountingWaker,
}

impl Waiter {
    /// Starts acquiring and expects to be queued.
    #[track_caller]
    fn queue(semaphore: &Semaphore) -> Self {
        Self::queue_bounded(semaphore, usize::MAX)
    }

    #[track_caller]
    fn queue_bounded(semaphore: &Semaphore, max_waiters: usize) -> Self {
        let mut acquire = semaphore.acquire_bounded(max_waiters);
        let waker = CountingWaker::new();
        assert!(
            waker.poll(&mut acquire).is_pending(),
            "expected to be queued"
        );
        assert!(acquire.is_queued());
        Self { acquire, waker }
    }

    fn woken(&self) -> usize {
        self.waker.count()
    }

    fn poll(&mut self) -> Poll<Result<Permit, AcquireError>> {
        self.waker.poll(&mut self.acquire)
    }

    #[track_caller]
    fn expect_permit(&mut self) -> Permit {
        match self.poll() {
            Poll::Ready(Ok(permit)) => permit,
            Poll::Ready(Err(error)) => panic!("expected a permit, got {error:?}"),
            Poll::Pending => panic!("expected a permit, still pending"),
        }
    }
}

fn woken(waiters: &[Waiter]) -> Vec<usize> {
    waiters.iter().map(Waiter::woken).collect()
}

#[test]
fn permits_are_taken_and_returned_without_waiting() {
    let semaphore = Semaphore::new(2);
    assert_eq!(semaphore.limit(), 2);
    let first = semaphore.try_acquire().unwrap();
    let second = futures::executor::block_on(semaphore.acquire()).unwrap();
    assert_eq!(semaphore.available_permits(), 0);
    assert_eq!(semaphore.in_use(), 2);
    assert_eq!(
        semaphore.try_acquire().unwrap_err(),
        TryAcquireError::NoPermits
    );
    drop(first);
    assert_eq!(semaphore.available_permits(), 1);
    drop(second);
    assert_eq!(semaphore.available_permits(), 2);
    assert_eq!(semaphore.in_use(), 0);
    assert_eq!(semaphore.waiters(), 0);
}

#[test]
fn clones_share_the_same_permits() {
    let semaphore = Semaphore::new(1);
    let other = semaphore.clone();
    let permit = other.try_acquire().unwrap();
    assert!(semaphore.try_acquire().is_err());
    drop(permit);
    assert!(semaphore.try_acquire().is_ok());
}

#[test]
fn permits_go_to_waiters_in_fifo_order_one_wake_per_release() {
    let semaphore = Semaphore::new(1);
    let held = semaphore.try_acquire().unwrap();
    let mut waiters: Vec<Waiter> = (0..4).map(|_| Waiter::queue(&semaphore)).collect();
    assert_eq!(semaphore.waiters(), 4);
    assert_eq!(woken(&waiters), [0, 0, 0, 0]);

    drop(held);
    // Exactly one waiter, the first, is woken; the permit is reserved for it.
    assert_eq!(woken(&waiters), [1, 0, 0, 0]);
    assert_eq!(semaphore.available_permits(), 0);
    assert_eq!(semaphore.waiters(), 3);
    // The later waiters cannot overtake it, even when polled first.
    assert!(waiters[1].poll().is_pending());
    assert!(waiters[3].poll().is_pending());

    let mut order = Vec::new();
    for index in 0..4 {
        let permit = waiters[index].expect_permit();
        order.push(index);
        let expected: Vec<usize> = (0..4).map(|i| usize::from(i <= index)).collect();
        assert_eq!(
            woken(&waiters),
            expected,
            "after waiter {index} got its permit"
        );
        drop(permit);
        // Only the next one in line is woken by this release.
        let expected: Vec<usize> = (0..4).map(|i| usize::from(i <= index + 1)).collect();
        assert_eq!(woken(&waiters), expected, "after waiter {index} released");
    }
    assert_eq!(order, [0, 1, 2, 3]);
    assert_eq!(semaphore.available_permits(), 1);
    assert_eq!(semaphore.waiters(), 0);
}

#[test]
fn two_releases_wake_exactly_the_first_two_waiters() {
    let semaphore = Semaphore::new(3);
    let mut held: Vec<Permit> = (0..3).map(|_| semaphore.try_acquire().unwrap()).collect();
    let waiters: Vec<Waiter> = (0..5).map(|_| Waiter::queue(&semaphore)).collect();
    drop(held.pop());
    drop(held.pop());
    assert_eq!(woken(&waiters), [1, 1, 0, 0, 0]);
    assert_eq!(semaphore.waiters(), 3);
    assert_eq!(
        semaphore.in_use(),
        3,
        "handed-over permits still count as in use"
    );
}

#[test]
fn a_newcomer_cannot_take_a_permit_promised_to_a_waiter() {
    let semaphore = Semaphore::new(1);
    let held = semaphore.try_acquire().unwrap();
    let mut waiter = Waiter::queue(&semaphore);
    drop(held);
    assert_eq!(waiter.woken(), 1);
    // Granted but not yet picked up: nobody else gets it.
    assert_eq!(
        semaphore.try_acquire().unwrap_err(),
        TryAcquireError::NoPermits
    );
    let mut newcomer = semaphore.acquire();
    assert!(poll_once(&mut newcomer).is_pending());
    assert!(newcomer.is_queued());
    let permit = waiter.expect_permit();
    assert!(!waiter.acquire.is_queued());
    drop(permit);
    assert!(matches!(poll_once(&mut newcomer), Poll::Ready(Ok(_))));
}

#[test]
fn a_repoll_with_a_new_waker_replaces_the_old_one() {
    let semaphore = Semaphore::new(1);
    let held = semaphore.try_acquire().unwrap();
    let mut waiter = Waiter::queue(&semaphore);
    let second_waker = CountingWaker::new();
    assert!(second_waker.poll(&mut waiter.acquire).is_pending());
    drop(held);
    assert_eq!(waiter.woken(), 0, "the stale waker must not be used");
    assert_eq!(second_waker.count(), 1);
}

#[test]
fn a_dropped_waiter_leaves_the_queue() {
    let semaphore = Semaphore::new(1);
    let held = semaphore.try_acquire().unwrap();
    let mut first = Waiter::queue(&semaphore);
    let second = Waiter::queue(&semaphore);
    let mut third = Waiter::queue(&semaphore);
    assert_eq!(semaphore.waiters(), 3);

    drop(second);
    assert_eq!(semaphore.waiters(), 2);

    drop(held);
    assert_eq!((first.woken(), third.woken()), (1, 0));
    let permit = first.expect_permit();
    drop(permit);
    // The dropped waiter is skipped: the third one is next.
    assert_eq!(third.woken(), 1);
    drop(third.expect_permit());
    assert_eq!(semaphore.available_permits(), 1);
    assert_eq!(semaphore.waiters(), 0);
}

#[test]
fn dropping_the_only_waiter_leaves_the_fast_path_usable() {
    let semaphore = Semaphore::new(1);
    let held = semaphore.try_acquire().unwrap();
    drop(Waiter::queue(&semaphore));
    assert_eq!(semaphore.waiters(), 0);
    drop(held);
    assert_eq!(semaphore.available_permits(), 1);
    assert!(semaphore.try_acquire().is_ok());
}

#[test]
fn a_permit_granted_to_a_dropped_waiter_passes_to_the_next_one() {
    let semaphore = Semaphore::new(1);
    let held = semaphore.try_acquire().unwrap();
    let first = Waiter::queue(&semaphore);
    let mut second = Waiter::queue(&semaphore);

    drop(held);
    assert_eq!(first.woken(), 1);
    assert_eq!(semaphore.in_use(), 1);

    // The first waiter was handed the permit but goes away without polling.
    drop(first);
    assert_eq!(
        second.woken(),
        1,
        "the permit moves on and wakes the next waiter"
    );
    assert_eq!(semaphore.available_permits(), 0);
    assert_eq!(semaphore.in_use(), 1);
    assert_eq!(semaphore.waiters(), 0);

    let permit = second.expect_permit();
    drop(permit);
    assert_eq!(semaphore.available_permits(), 1);
    assert_eq!(semaphore.in_use(), 0);
}

#[test]
fn a_permit_granted_to_the_last_dropped_waiter_returns_to_the_pool() {
    let semaphore = Semaphore::new(2);
    let held: Vec<Permit> = (0..2).map(|_| semaphore.try_acquire().unwrap()).collect();
    let waiter = Waiter::queue(&semaphore);
    drop(held);
    assert_eq!(semaphore.available_permits(), 1);
    drop(waiter);
    assert_eq!(semaphore.available_permits(), 2, "no permit may be lost");
    assert_eq!(semaphore.in_use(), 0);
    let both: Vec<Permit> = (0..2).map(|_| semaphore.try_acquire().unwrap()).collect();
    assert_eq!(both.len(), 2);
}

#[test]
fn an_acquire_dropped_before_its_first_poll_changes_nothing() {
    let semaphore = Semaphore::new(1);
    let held = semaphore.try_acquire().unwrap();
    let acquire = semaphore.acquire();
    assert!(!acquire.is_queued());
    drop(acquire);
    assert_eq!(semaphore.waiters(), 0);
    drop(held);
    assert_eq!(semaphore.available_permits(), 1);
}

#[test]
fn close_fails_waiters_and_later_acquires_while_held_permits_still_return() {
    let semaphore = Semaphore::new(2);
    let held = semaphore.try_acquire().unwrap();
    let also_held = semaphore.try_acquire().unwrap();
    let mut first = Waiter::queue(&semaphore);
    let mut second = Waiter::queue(&semaphore);

    semaphore.close();
    assert!(semaphore.is_closed());
    assert_eq!((first.woken(), second.woken()), (1, 1));
    assert_eq!(semaphore.waiters(), 0);
    assert!(matches!(
        first.poll(),
        Poll::Ready(Err(AcquireError::Closed))
    ));
    assert!(matches!(
        second.poll(),
        Poll::Ready(Err(AcquireError::Closed))
    ));

    drop(held);
    assert_eq!(semaphore.available_permits(), 1);
    // Permits are free, but the semaphore admits nothing any more.
    assert_eq!(
        semaphore.try_acquire().unwrap_err(),
        TryAcquireError::Closed
    );
    let mut later = semaphore.acquire();
    assert!(matches!(
        poll_once(&mut later),
        Poll::Ready(Err(AcquireError::Closed))
    ));
    assert_eq!(semaphore.waiters(), 0);

    drop(also_held);
    assert_eq!(semaphore.available_permits(), 2);
    assert_eq!(semaphore.in_use(), 0);
}

#[test]
fn close_while_a_permit_is_handed_over_keeps_the_permit_accounted() {
    let semaphore = Semaphore::new(1);
    let held = semaphore.try_acquire().unwrap();
    let waiter = Waiter::queue(&semaphore);
    drop(held); // granted to the waiter, not picked up
    semaphore.close();
    drop(waiter); // gives the permit back
    assert_eq!(semaphore.available_permits(), 1);
    assert_eq!(semaphore.in_use(), 0);
}

#[test]
fn an_acquire_polled_after_completion_answers_closed() {
    let semaphore = Semaphore::new(1);
    let mut acquire = semaphore.acquire();
    let permit = match poll_once(&mut acquire) {
        Poll::Ready(Ok(permit)) => permit,
        other => panic!("expected a permit, got {other:?}"),
    };
    assert!(matches!(
        poll_once(&mut acquire),
        Poll::Ready(Err(AcquireError::Closed))
    ));
    // The second poll did not hand out another permit.
    assert_eq!(semaphore.in_use(), 1);
    drop(permit);
    assert_eq!(semaphore.available_permits(), 1);
}

#[test]
fn raising_the_limit_wakes_waiters_at_once() {
    let semaphore = Semaphore::new(1);
    let held = semaphore.try_acquire().unwrap();
    let mut waiters: Vec<Waiter> = (0..3).map(|_| Waiter::queue(&semaphore)).collect();

    semaphore.set_limit(3);
    assert_eq!(semaphore.limit(), 3);
    assert_eq!(woken(&waiters), [1, 1, 0]);
    assert_eq!(semaphore.waiters(), 1);
    assert_eq!(semaphore.in_use(), 3);
    assert_eq!(semaphore.available_permits(), 0);

    let first = waiters[0].expect_permit();
    let second = waiters[1].expect_permit();
    assert!(waiters[2].poll().is_pending());
    drop(held);
    assert_eq!(woken(&waiters), [1, 1, 1]);
    drop((first, second, waiters[2].expect_permit()));
    assert_eq!(semaphore.available_permits(), 3);
}

#[test]
fn raising_the_limit_without_waiters_adds_free_permits() {
    let semaphore = Semaphore::new(1);
    semaphore.set_limit(4);
    assert_eq!(semaphore.available_permits(), 4);
    assert_eq!(semaphore.in_use(), 0);
}

#[test]
fn lowering_the_limit_retires_permits_as_they_come_back() {
    let semaphore = Semaphore::new(3);
    let mut held: Vec<Permit> = (0..3).map(|_| semaphore.try_acquire().unwrap()).collect();
    semaphore.set_limit(1);
    assert_eq!(semaphore.limit(), 1);
    assert_eq!(semaphore.in_use(), 3, "in-flight work is not interrupted");
    assert_eq!(semaphore.available_permits(), 0);

    let mut waiter = Waiter::queue(&semaphore);
    drop(held.pop());
    assert_eq!(waiter.woken(), 0, "the first returned permit is retired");
    assert_eq!((semaphore.in_use(), semaphore.available_permits()), (2, 0));
    drop(held.pop());
    assert_eq!(waiter.woken(), 0, "so is the second");
    assert_eq!((semaphore.in_use(), semaphore.available_permits()), (1, 0));
    drop(held.pop());
    assert_eq!(waiter.woken(), 1, "the third one is within the new limit");
    assert_eq!(semaphore.in_use(), 1);
    assert_eq!(semaphore.waiters(), 0);

    drop(waiter.expect_permit());
    assert_eq!((semaphore.in_use(), semaphore.available_permits()), (0, 1));
}

#[test]
fn lowering_the_limit_takes_free_permits_first() {
    let semaphore = Semaphore::new(4);
    let held = semaphore.try_acquire().unwrap();
    semaphore.set_limit(2);
    assert_eq!((semaphore.in_use(), semaphore.available_permits()), (1, 1));
    semaphore.set_limit(1);
    assert_eq!((semaphore.in_use(), semaphore.available_permits()), (1, 0));
    drop(held);
    assert_eq!((semaphore.in_use(), semaphore.available_permits()), (0, 1));
}

#[test]
fn raising_the_limit_again_pays_the_retirement_debt_first() {
    let semaphore = Semaphore::new(2);
    let held: Vec<Permit> = (0..2).map(|_| semaphore.try_acquire().unwrap()).collect();
    semaphore.set_limit(0);
    assert_eq!(semaphore.in_use(), 2);
    let waiter = Waiter::queue(&semaphore);
    semaphore.set_limit(1);
    // One of the two outstanding permits may now stay: nothing new is free.
    assert_eq!(waiter.woken(), 0);
    assert_eq!((semaphore.in_use(), semaphore.available_permits()), (2, 0));
    drop(held);
    assert_eq!(waiter.woken(), 1);
    drop(waiter);
    assert_eq!((semaphore.in_use(), semaphore.available_permits()), (0, 1));
}

#[test]
fn a_waiter_granted_then_dropped_after_lowering_pays_the_debt() {
    let semaphore = Semaphore::new(1);
    let held = semaphore.try_acquire().unwrap();
    let first = Waiter::queue(&semaphore);
    let second = Waiter::queue(&semaphore);
    drop(held); // granted to `first`
    semaphore.set_limit(0);
    drop(first); // its permit is retired instead of going to `second`
    assert_eq!(second.woken(), 0);
    assert_eq!((semaphore.in_use(), semaphore.available_permits()), (0, 0));
    assert_eq!(semaphore.waiters(), 1);
}

#[test]
fn acquire_bounded_zero_never_waits() {
    let semaphore = Semaphore::new(1);
    let mut free = semaphore.acquire_bounded(0);
    let permit = match poll_once(&mut free) {
        Poll::Ready(Ok(permit)) => permit,
        other => panic!("a free permit must be taken, got {other:?}"),
    };
    let mut refused = semaphore.acquire_bounded(0);
    assert!(matches!(
        poll_once(&mut refused),
        Poll::Ready(Err(AcquireError::QueueFull))
    ));
    assert!(!refused.is_queued());
    assert_eq!(semaphore.waiters(), 0);
    drop(permit);
    assert_eq!(semaphore.available_permits(), 1);
}

#[test]
fn acquire_bounded_rejects_when_the_queue_is_full() {
    let semaphore = Semaphore::new(1);
    let held = semaphore.try_acquire().unwrap();
    let first = Waiter::queue_bounded(&semaphore, 2);
    let _second = Waiter::queue_bounded(&semaphore, 2);
    let mut third = semaphore.acquire_bounded(2);
    assert!(matches!(
        poll_once(&mut third),
        Poll::Ready(Err(AcquireError::QueueFull))
    ));
    assert_eq!(semaphore.waiters(), 2);
    // An unbounded acquire still queues behind them.
    let _unbounded = Waiter::queue(&semaphore);
    assert_eq!(semaphore.waiters(), 3);
    // A bound counts the waiters already queued: with 3 queued, 4 places leave room.
    let _fourth = Waiter::queue_bounded(&semaphore, 4);
    drop(first);
    assert_eq!(semaphore.waiters(), 3);
    drop(held);
}

#[test]
fn errors_describe_themselves() {
    assert_eq!(
        AcquireError::QueueFull.to_string(),
        "semaphore queue is full"
    );
    assert_eq!(AcquireError::Closed.to_string(), "semaphore closed");
    assert_eq!(
        TryAcquireError::NoPermits.to_string(),
        "no permits available"
    );
    assert_eq!(TryAcquireError::Closed.to_string(), "semaphore closed");
}

#[test]
fn threads_never_exceed_the_limit() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    let semaphore = Semaphore::new(3);
    let inside = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let (semaphore, inside, peak) = (semaphore.clone(), inside.clone(), peak.clone());
            std::thread::spawn(move || {
                for _ in 0..200 {
                    let permit = futures::executor::block_on(semaphore.acquire()).unwrap();
                    let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    std::thread::yield_now();
                    inside.fetch_sub(1, Ordering::SeqCst);
                    drop(permit);
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    assert!(peak.load(Ordering::SeqCst) <= 3);
    assert_eq!(semaphore.available_permits(), 3);
    assert_eq!(semaphore.waiters(), 0);
    assert_eq!(semaphore.in_use(), 0);
}
