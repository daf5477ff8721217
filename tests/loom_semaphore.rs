//! Model checking of the semaphore with loom: every interleaving (up to a
//! preemption bound) of 2–3 threads racing on acquire, release, cancel,
//! close and `set_limit`.
//!
//! Only built with `--cfg loom`, where `src/sync.rs` swaps the semaphore's
//! atomics and mutex for loom's instrumented ones:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=/tmp/target-loom \
//!     cargo test --test loom_semaphore --release
//! ```
//!
//! The preemption bound defaults to 3 (`LOOM_MAX_PREEMPTIONS` overrides it).
//!
//! Invariants checked in every explored execution:
//! - never more permits held at once than the limit (a `Held` counter that
//!   holders bump after acquiring and drop before releasing, so it never
//!   over-counts);
//! - no lost or duplicated permit: once every thread is done,
//!   `available_permits() == limit()`, `in_use() == 0`, `waiters() == 0`;
//! - no missed wake-up: waiters run under `loom::future::block_on`, which
//!   parks the thread until its waker is called — a permit granted (or a
//!   close) without a wake-up leaves it parked forever, and loom reports
//!   the deadlock;
//! - `Admission::stats()` is one snapshot (`loom/stats.rs`);
//! - the criticality paths (`loom/criticality.rs`): ranked grants and
//!   lock-free takes, a reserve change against a take, displacement and
//!   keyed releases keep these same guarantees.
#![cfg(loom)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

#[path = "loom/criticality.rs"]
mod criticality;
#[path = "loom/stats.rs"]
mod stats;

use edgeshed::semaphore::{AcquireError, Permit, Semaphore, TryAcquireError};
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use loom::sync::Arc;
use loom::thread;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Wake, Waker};

/// Runs `f` under loom with a default preemption bound of 3, and prints how
/// many executions were explored (visible with `--nocapture`).
fn model<F>(f: F)
where
    F: Fn() + Sync + Send + 'static,
{
    use std::sync::atomic::{AtomicUsize as StdAtomicUsize, Ordering::Relaxed};
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    let bound = builder.preemption_bound;
    let executions = std::sync::Arc::new(StdAtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&executions);
    builder.check(move || {
        counter.fetch_add(1, Relaxed);
        f();
    });
    println!(
        "{} executions explored (preemption bound {bound:?})",
        executions.load(Relaxed)
    );
}

/// Counts permits known to be held; asserts the count never exceeds `max`.
struct Held {
    count: AtomicUsize,
    max: usize,
}

impl Held {
    fn new(initial: usize, max: usize) -> Arc<Self> {
        Arc::new(Held {
            count: AtomicUsize::new(initial),
            max,
        })
    }

    /// Records one more permit held; returns the number now held.
    fn enter(&self) -> usize {
        let now = self.count.fetch_add(1, SeqCst) + 1;
        assert!(
            now <= self.max,
            "{now} permits held at once, limit {}",
            self.max
        );
        now
    }

    /// Gives `permit` back, uncounting it first.
    fn release(&self, permit: Permit) {
        self.count.fetch_sub(1, SeqCst);
        drop(permit);
    }
}

/// Waits for a permit (parking until woken), counting it while held.
fn acquire_and_release(semaphore: &Semaphore, held: &Held) {
    let permit = loom::future::block_on(semaphore.acquire()).expect("not closed");
    held.enter();
    held.release(permit);
}

/// Every permit is back and nobody is queued.
fn assert_settled(semaphore: &Semaphore, limit: usize) {
    assert_eq!(semaphore.limit(), limit, "limit");
    assert_eq!(semaphore.in_use(), 0, "permits still out");
    assert_eq!(semaphore.waiters(), 0, "waiters left in the queue");
    assert_eq!(
        semaphore.available_permits(),
        limit,
        "permits lost or duplicated"
    );
}

/// A loom-visible waker that only records that it was called.
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.store(true, SeqCst);
    }
}

fn flag_waker() -> (std::sync::Arc<Flag>, Waker) {
    let flag = std::sync::Arc::new(Flag(AtomicBool::new(false)));
    let waker = Waker::from(std::sync::Arc::clone(&flag));
    (flag, waker)
}

/// Lock-free release (fast-path CAS) racing a waiter that sets the SLOW flag
/// and enqueues: the permit must reach the waiter, and it must be woken.
#[test]
fn release_races_enqueue() {
    model(|| {
        let semaphore = Semaphore::new(1);
        let held = Held::new(1, 1);
        let permit = semaphore.try_acquire().unwrap();
        let releaser = {
            let held = Arc::clone(&held);
            thread::spawn(move || held.release(permit))
        };
        acquire_and_release(&semaphore, &held);
        releaser.join().unwrap();
        assert_settled(&semaphore, 1);
    });
}

/// Two waiters and one release: both get the single permit in turn (the
/// first one's release hands it to the second), never both at once.
#[test]
fn two_waiters_one_permit() {
    model(|| {
        let semaphore = Semaphore::new(1);
        let held = Held::new(1, 1);
        let permit = semaphore.try_acquire().unwrap();
        let waiter = {
            let (semaphore, held) = (semaphore.clone(), Arc::clone(&held));
            thread::spawn(move || acquire_and_release(&semaphore, &held))
        };
        let releaser = {
            let held = Arc::clone(&held);
            thread::spawn(move || held.release(permit))
        };
        acquire_and_release(&semaphore, &held);
        waiter.join().unwrap();
        releaser.join().unwrap();
        assert_settled(&semaphore, 1);
    });
}

/// A waiter polls once and is then dropped (cancelled) while the permit is
/// released concurrently — it may have been granted the permit in between.
/// Without another waiter, the permit must go back to the pool.
#[test]
fn cancel_races_release() {
    model(|| {
        let semaphore = Semaphore::new(1);
        let permit = semaphore.try_acquire().unwrap();
        let canceller = {
            let semaphore = semaphore.clone();
            thread::spawn(move || {
                let (_flag, waker) = flag_waker();
                let mut acquire = pin!(semaphore.acquire());
                match acquire.as_mut().poll(&mut Context::from_waker(&waker)) {
                    Poll::Ready(result) => drop(result.expect("not closed")),
                    Poll::Pending => assert!(acquire.is_queued()),
                }
                // `acquire` is dropped here: queued, granted or done.
            })
        };
        drop(permit);
        canceller.join().unwrap();
        assert_settled(&semaphore, 1);
    });
}

/// Like `cancel_races_release`, with a second waiter: a permit granted to
/// the cancelled waiter must pass on to it (and wake it).
#[test]
fn cancel_passes_permit_on() {
    model(|| {
        let semaphore = Semaphore::new(1);
        let held = Held::new(1, 1);
        let permit = semaphore.try_acquire().unwrap();
        let canceller = {
            let (semaphore, held) = (semaphore.clone(), Arc::clone(&held));
            thread::spawn(move || {
                let (_flag, waker) = flag_waker();
                let mut acquire = pin!(semaphore.acquire());
                if let Poll::Ready(result) = acquire.as_mut().poll(&mut Context::from_waker(&waker))
                {
                    let permit = result.expect("not closed");
                    held.enter();
                    held.release(permit);
                }
            })
        };
        let releaser = {
            let held = Arc::clone(&held);
            thread::spawn(move || held.release(permit))
        };
        acquire_and_release(&semaphore, &held);
        canceller.join().unwrap();
        releaser.join().unwrap();
        assert_settled(&semaphore, 1);
    });
}

/// `close` racing a waiter and a release: the waiter is woken either with
/// the permit or with `Closed`, the permit still comes back, and later
/// acquires fail with `Closed`.
#[test]
fn close_races_waiter_and_release() {
    model(|| {
        let semaphore = Semaphore::new(1);
        let held = Held::new(1, 1);
        let permit = semaphore.try_acquire().unwrap();
        let waiter = {
            let (semaphore, held) = (semaphore.clone(), Arc::clone(&held));
            thread::spawn(move || match loom::future::block_on(semaphore.acquire()) {
                Ok(permit) => {
                    held.enter();
                    held.release(permit);
                }
                Err(error) => assert_eq!(error, AcquireError::Closed),
            })
        };
        let closer = {
            let semaphore = semaphore.clone();
            thread::spawn(move || semaphore.close())
        };
        held.release(permit);
        waiter.join().unwrap();
        closer.join().unwrap();
        assert!(semaphore.is_closed());
        assert_eq!(semaphore.try_acquire().err(), Some(TryAcquireError::Closed));
        assert_settled(&semaphore, 1);
    });
}

/// Raising the limit from 0 must wake a waiter that is enqueueing
/// concurrently.
#[test]
fn set_limit_up_wakes_waiter() {
    model(|| {
        let semaphore = Semaphore::new(0);
        let held = Held::new(0, 1);
        let waiter = {
            let (semaphore, held) = (semaphore.clone(), Arc::clone(&held));
            thread::spawn(move || acquire_and_release(&semaphore, &held))
        };
        semaphore.set_limit(1);
        waiter.join().unwrap();
        assert_settled(&semaphore, 1);
    });
}

/// Lowering the limit from 2 to 1 while a permit comes back (fast path or
/// debt payment) and another holder re-acquires: at most 2 held before the
/// change, at most 1 once it is done, and the permit count ends at 1.
#[test]
fn set_limit_down_races_release() {
    model(|| {
        let semaphore = Semaphore::new(2);
        let held = Held::new(2, 2);
        let lowered = Arc::new(AtomicBool::new(false));
        let first = semaphore.try_acquire().unwrap();
        let second = semaphore.try_acquire().unwrap();
        let releaser = {
            let held = Arc::clone(&held);
            thread::spawn(move || held.release(first))
        };
        let lowerer = {
            let (semaphore, lowered) = (semaphore.clone(), Arc::clone(&lowered));
            thread::spawn(move || {
                semaphore.set_limit(1);
                lowered.store(true, SeqCst);
            })
        };
        held.release(second);
        let lowered_before = lowered.load(SeqCst);
        let permit = loom::future::block_on(semaphore.acquire()).expect("not closed");
        let now = held.enter();
        if lowered_before {
            assert!(now <= 1, "{now} held after the limit was lowered to 1");
        }
        held.release(permit);
        releaser.join().unwrap();
        lowerer.join().unwrap();
        assert_settled(&semaphore, 1);
    });
}

/// Lowering to 0 and raising back to 1 while the only permit comes back and
/// a waiter queues: the permit is retired or reused exactly once, and the
/// waiter is woken.
#[test]
fn set_limit_down_up_races_release_and_waiter() {
    model(|| {
        let semaphore = Semaphore::new(1);
        let held = Held::new(1, 1);
        let permit = semaphore.try_acquire().unwrap();
        let resizer = {
            let semaphore = semaphore.clone();
            thread::spawn(move || {
                semaphore.set_limit(0);
                semaphore.set_limit(1);
            })
        };
        let releaser = {
            let held = Arc::clone(&held);
            thread::spawn(move || held.release(permit))
        };
        acquire_and_release(&semaphore, &held);
        resizer.join().unwrap();
        releaser.join().unwrap();
        assert_settled(&semaphore, 1);
    });
}

/// Bounded queue (one waiter at most) with two contenders and a release:
/// each one either gets the permit or is refused with `QueueFull`, a
/// refused one never holds a place or a permit, and a queued one is woken.
#[test]
fn bounded_queue_races_release() {
    model(|| {
        let semaphore = Semaphore::new(1);
        let held = Held::new(1, 1);
        let permit = semaphore.try_acquire().unwrap();
        let contend = |semaphore: Semaphore, held: Arc<Held>| {
            move || match loom::future::block_on(semaphore.acquire_bounded(1)) {
                Ok(permit) => {
                    held.enter();
                    held.release(permit);
                }
                Err(error) => assert_eq!(error, AcquireError::QueueFull),
            }
        };
        let other = thread::spawn(contend(semaphore.clone(), Arc::clone(&held)));
        let releaser = {
            let held = Arc::clone(&held);
            thread::spawn(move || held.release(permit))
        };
        contend(semaphore.clone(), Arc::clone(&held))();
        other.join().unwrap();
        releaser.join().unwrap();
        assert_settled(&semaphore, 1);
    });
}
