//! The semaphore's criticality paths under loom: ranked fast-path takes and
//! grants racing releases, a reserve change racing a lock-free take (the
//! `RESIZE` flag), displacement racing a release, and keyed permits (whose
//! releases take the lock) racing a keyed waiter.

use super::{model, Held};
use edgeshed::admission::{Admission, Call, Criticality, Options, Policy, Reserve};
use edgeshed::error::OverloadCause;
use edgeshed::time::ManualClock;
use loom::sync::atomic::{AtomicBool, Ordering::SeqCst};
use loom::sync::Arc;
use loom::thread;
use std::time::Duration;

/// Every permit is back, nobody waits, no key is left.
#[track_caller]
fn assert_settled<C: edgeshed::time::Clock>(admission: &Admission<C>, limit: usize) {
    let stats = admission.stats();
    assert_eq!((stats.in_flight, stats.queued), (0, 0), "{stats:?}");
    assert_eq!(
        admission.semaphore().available_permits(),
        limit,
        "permits lost or duplicated"
    );
    assert_eq!(
        admission.semaphore().active_keys(),
        0,
        "a key outlived its calls"
    );
}

/// Limit 2 with the default reserve: a sheddable call may hold 1 slot.
/// A sheddable waiter queues behind one default holder (1 free, which it
/// must leave); the holder's release hands it a permit while a critical
/// call takes the free one lock-free. Nobody is missed, never more than 2.
#[test]
fn a_ranked_grant_races_a_critical_fast_take() {
    model(|| {
        let admission = Admission::wait(2).unwrap();
        admission.set_reserve(Reserve::default());
        let held = Held::new(1, 2);
        let holder = admission.try_admit().unwrap();
        let waiter = {
            let (admission, held) = (admission.clone(), Arc::clone(&held));
            thread::spawn(move || {
                let call = Call::new(Criticality::Sheddable);
                let permit = loom::future::block_on(admission.admit_call(call)).expect("admitted");
                held.enter();
                held.release(permit);
            })
        };
        let critical = {
            let (admission, held) = (admission.clone(), Arc::clone(&held));
            thread::spawn(move || {
                if let Some(permit) = admission.try_admit_as(Criticality::Critical) {
                    held.enter();
                    held.release(permit);
                }
            })
        };
        held.release(holder);
        waiter.join().unwrap();
        critical.join().unwrap();
        assert_settled(&admission, 2);
    });
}

/// A reserve switched on while a sheddable caller takes permits lock-free:
/// once `set_reserve` has returned, no take may use the old keep (the keeps
/// are rewritten only while `RESIZE` sends the fast path to the lock).
#[test]
fn set_reserve_races_a_sheddable_fast_take() {
    model(|| {
        let admission = Admission::shed(2).unwrap();
        let reserved = Arc::new(AtomicBool::new(false));
        let setter = {
            let (admission, reserved) = (admission.clone(), Arc::clone(&reserved));
            thread::spawn(move || {
                admission.set_reserve(Reserve::default());
                reserved.store(true, SeqCst);
            })
        };
        let first = admission.try_admit_as(Criticality::Sheddable);
        let after = reserved.load(SeqCst);
        let second = admission.try_admit_as(Criticality::Sheddable);
        if after && first.is_some() {
            assert!(
                second.is_none(),
                "a sheddable call got the slot kept for critical ones"
            );
        }
        drop((first, second));
        setter.join().unwrap();
        assert_eq!(admission.reserve(), Reserve::default());
        assert_settled(&admission, 2);
    });
}

/// Raising the limit from 3 to 4 adds a free permit and raises the
/// sheddable keep by one in two steps (the pool first, then the keeps).
/// With 2 of 3 held, a sheddable call is refused before (ceiling 2 of 3)
/// and after (2 of 4); a lock-free take between the two steps must not see
/// the new permit with the old keep: `RESIZE` sends it to the lock.
#[test]
fn a_sheddable_take_never_sees_a_raised_limit_with_the_old_keep() {
    model(|| {
        let admission = Admission::shed(3).unwrap();
        admission.set_reserve(Reserve::default());
        let held: Vec<_> = (0..2)
            .map(|_| admission.try_admit_as(Criticality::Critical).unwrap())
            .collect();
        let raiser = {
            let admission = admission.clone();
            thread::spawn(move || admission.semaphore().set_limit(4))
        };
        let taken = admission.try_admit_as(Criticality::Sheddable);
        assert!(taken.is_none(), "a sheddable call over its ceiling of 2");
        raiser.join().unwrap();
        drop(held);
        assert_settled(&admission, 4);
    });
}

/// A critical arrival displaces a sheddable waiter from a full queue while
/// the only permit comes back: the sheddable call is admitted, displaced or
/// shed (never two of them), the critical one is always admitted, and the
/// permit is never lost.
#[test]
fn displacement_races_release() {
    model(|| {
        let policy = Policy::queue(1, Duration::from_secs(1));
        let admission =
            Admission::with_options(1, policy, Options::new(), ManualClock::new()).unwrap();
        let held = Held::new(1, 1);
        let holder = admission.try_admit().unwrap();
        let batch = {
            let (admission, held) = (admission.clone(), Arc::clone(&held));
            thread::spawn(move || {
                let call = Call::new(Criticality::Sheddable);
                match loom::future::block_on(admission.admit_call(call)) {
                    Ok(permit) => {
                        held.enter();
                        held.release(permit);
                    }
                    Err(error) => {
                        let cause = error.overloaded().expect("a 503").cause();
                        assert!(matches!(
                            cause,
                            OverloadCause::Displaced | OverloadCause::Shed
                        ));
                    }
                }
            })
        };
        let critical = {
            let (admission, held) = (admission.clone(), Arc::clone(&held));
            thread::spawn(move || {
                let call = Call::new(Criticality::Critical);
                let permit =
                    loom::future::block_on(admission.admit_call(call)).expect("critical gets in");
                held.enter();
                held.release(permit);
            })
        };
        held.release(holder);
        batch.join().unwrap();
        critical.join().unwrap();
        let stats = admission.stats();
        let batch = stats.by_criticality.sheddable;
        assert_eq!(
            batch.admitted + batch.displaced + batch.shed,
            1,
            "{stats:?}"
        );
        assert_settled(&admission, 1);
    });
}

/// A keyed permit's release (it takes the lock, to uncount its key) racing
/// a waiter of another key that is queueing: the waiter is woken with the
/// permit and both keys are forgotten afterwards.
#[test]
fn a_keyed_release_races_a_keyed_waiter() {
    model(|| {
        let admission = Admission::wait(1).unwrap();
        let held = Held::new(1, 1);
        let call = |key: &str| Call::new(Criticality::Default).with_key(key);
        let holder = loom::future::block_on(admission.admit_call(call("a"))).unwrap();
        let waiter = {
            let (admission, held) = (admission.clone(), Arc::clone(&held));
            thread::spawn(move || {
                let permit = loom::future::block_on(admission.admit_call(call("b"))).unwrap();
                held.enter();
                held.release(permit);
            })
        };
        held.release(holder);
        waiter.join().unwrap();
        assert_settled(&admission, 1);
    });
}
