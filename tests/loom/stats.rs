//! `Admission::stats()` is one snapshot: its `in_flight`, `queued` and
//! `limit` held together at one instant, whatever runs concurrently.

use super::model;
use edgeshed::admission::{Admission, Stats};
use loom::thread;

/// What holds at every instant for a limit that was never lowered.
#[track_caller]
fn assert_consistent(stats: Stats) {
    assert!(
        stats.queued == 0 || stats.in_flight >= stats.limit,
        "a waiter while a permit is free: {stats:?}"
    );
    assert!(stats.in_flight <= stats.limit, "over the limit: {stats:?}");
}

/// One holder takes the only permit and gives it back while a waiter
/// queues behind it and the main thread reads stats. Read piece by piece
/// (the permit count, then the queue), stats could see the permit still
/// free and then the waiter queued behind it: `in_flight: 0, queued: 1`.
#[test]
fn stats_are_one_snapshot() {
    model(|| {
        let admission = Admission::wait(1).unwrap();
        let holder = {
            let admission = admission.clone();
            thread::spawn(move || {
                if let Some(permit) = admission.try_admit() {
                    thread::yield_now();
                    drop(permit);
                }
            })
        };
        let waiter = {
            let admission = admission.clone();
            thread::spawn(move || {
                let permit = loom::future::block_on(admission.admit()).expect("not closed");
                drop(permit);
            })
        };
        assert_consistent(admission.stats());
        holder.join().unwrap();
        waiter.join().unwrap();
        let settled = admission.stats();
        assert_eq!((settled.in_flight, settled.queued), (0, 0));
    });
}
