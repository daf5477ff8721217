#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! The codel queue discipline on the manual clock: the queue timeout while
//! the queue has drained within the interval, the target once a standing
//! queue persists longer, newest first until it drains — and FIFO with the
//! same workload as the control.

mod support;

use edgeshed::admission::{Admission, Admit, AdmitError, Options, Policy, QueueDiscipline};
use edgeshed::error::{OverloadCause, Parameter};
use edgeshed::semaphore::Permit;
use edgeshed::time::ManualClock;
use std::task::Poll;
use std::time::Duration;
use support::poll_once;

const MS: Duration = Duration::from_millis(1);
/// The queue timeout, which is also codel's interval.
const TIMEOUT: Duration = Duration::from_millis(100);

fn admission(discipline: QueueDiscipline) -> (Admission<ManualClock>, ManualClock) {
    let clock = ManualClock::new();
    let options = Options::new().discipline(discipline);
    let admission =
        Admission::with_options(1, Policy::queue(8, TIMEOUT), options, clock.clone()).unwrap();
    (admission, clock)
}

#[track_caller]
fn wait(admission: &Admission<ManualClock>) -> Admit<ManualClock> {
    let mut admit = admission.admit();
    assert!(poll_once(&mut admit).is_pending());
    admit
}

/// Polls every waiter; returns the index of the one that got the permit.
#[track_caller]
fn served(waiters: &mut [Admit<ManualClock>]) -> (usize, Permit) {
    let mut found = None;
    for (index, admit) in waiters.iter_mut().enumerate() {
        if let Poll::Ready(outcome) = poll_once(admit) {
            assert!(found.is_none(), "two waiters finished at once");
            found = Some((index, outcome.unwrap()));
        }
    }
    found.expect("a waiter got the permit")
}

#[track_caller]
fn timed_out(admit: &mut Admit<ManualClock>) -> bool {
    match poll_once(admit) {
        Poll::Ready(Err(AdmitError::Overloaded(o))) => {
            assert_eq!(o.cause(), OverloadCause::QueueTimeout);
            true
        }
        Poll::Pending => false,
        other => panic!("expected a queue timeout or a wait, got {other:?}"),
    }
}

#[test]
fn a_queue_that_drained_within_the_interval_gives_new_waiters_the_queue_timeout() {
    let (admission, clock) = admission(QueueDiscipline::codel());
    let holder = admission.try_admit().unwrap();
    let mut first = wait(&admission); // t = 0: the queue starts
    clock.advance(60 * MS);
    let mut second = wait(&admission); // standing for 60 ms, not longer than 100
    clock.advance(39 * MS);
    assert!(!timed_out(&mut first), "t = 99: within its 100 ms");
    clock.advance(MS);
    assert!(timed_out(&mut first), "t = 100: its queue timeout");
    clock.advance(59 * MS);
    assert!(
        !timed_out(&mut second),
        "t = 159: the second has 100 ms too"
    );
    clock.advance(MS);
    assert!(timed_out(&mut second));
    drop(holder);
}

#[test]
fn a_standing_queue_gives_new_waiters_the_target_and_serves_newest_first() {
    let (admission, clock) = admission(QueueDiscipline::codel());
    let holder = admission.try_admit().unwrap();
    let mut old = vec![wait(&admission)]; // t = 0
    clock.advance(50 * MS);
    old.push(wait(&admission)); // t = 50, timeout at 150
    clock.advance(51 * MS); // t = 101: the first timed out, the queue never drained
    assert!(timed_out(&mut old[0]));
    drop(old.remove(0));

    // Standing for 101 ms > 100 ms: new waiters get 5 ms, newest first.
    let mut fresh = vec![wait(&admission), wait(&admission)]; // t = 101
    clock.advance(4 * MS);
    assert!(!timed_out(&mut fresh[0]) && !timed_out(&mut fresh[1]));
    drop(holder); // t = 105: the newest waiter gets the permit
    let mut all: Vec<Admit<ManualClock>> = old.into_iter().chain(fresh).collect();
    let (index, permit) = served(&mut all);
    assert_eq!(index, 2, "the newest waiter is served first");
    drop(all.remove(index));
    clock.advance(MS); // t = 106: the other fresh one reaches its 5 ms target
    assert!(timed_out(&mut all[1]), "the target, not the queue timeout");
    drop(all.remove(1));
    assert!(
        !timed_out(&mut all[0]),
        "the old waiter's own timer says 150 ms"
    );
    // But it has waited 56 ms, past the target, when it reaches the head of
    // the standing queue: refused there rather than served stale.
    drop(permit);
    assert!(
        timed_out(&mut all[0]),
        "a stale waiter is refused at the head"
    );
    assert_eq!(admission.stats().in_flight, 0);

    // The standing state holds for one interval after it was last seen
    // (t = 101): arrivals before t = 201 still get the target...
    let holder = admission.try_admit().unwrap();
    clock.advance(50 * MS); // t = 156
    let mut during = wait(&admission);
    clock.advance(6 * MS);
    assert!(timed_out(&mut during), "t = 162: still the 5 ms target");
    drop(holder);

    // ...and once the interval has passed with a permit idle, new waiters
    // get the queue timeout again, oldest first.
    clock.advance(50 * MS); // t = 212
    let holder = admission.try_admit().unwrap();
    let mut again = vec![wait(&admission), wait(&admission)];
    clock.advance(99 * MS);
    assert!(!timed_out(&mut again[0]) && !timed_out(&mut again[1]));
    drop(holder);
    let (index, _permit) = served(&mut again);
    assert_eq!(index, 0, "FIFO again after the queue drained");
}

#[test]
fn the_standing_state_survives_the_queue_emptying_by_its_own_target_timeouts() {
    let (admission, clock) = admission(QueueDiscipline::codel());
    let holder = admission.try_admit().unwrap();
    let mut first = wait(&admission); // t = 0: the busy spell starts
    clock.advance(101 * MS);
    assert!(timed_out(&mut first));
    let mut standing = wait(&admission); // t = 101: standing, 5 ms
    clock.advance(5 * MS);
    assert!(timed_out(&mut standing), "t = 106: the target");
    // The queue is empty now, but no permit was ever idle: an arrival
    // within the interval still finds the queue standing.
    assert_eq!(admission.stats().queued, 0);
    clock.advance(20 * MS); // t = 126
    let mut next = wait(&admission);
    clock.advance(6 * MS);
    assert!(
        timed_out(&mut next),
        "t = 132: the target again, not the full queue timeout"
    );
    drop(holder);
}

#[test]
fn a_full_standing_queue_displaces_from_its_stale_end() {
    use edgeshed::admission::{Call, Criticality};
    let clock = ManualClock::new();
    let options = Options::new().discipline(QueueDiscipline::codel());
    let admission =
        Admission::with_options(1, Policy::queue(2, TIMEOUT), options, clock.clone()).unwrap();
    let holder = admission.try_admit().unwrap();
    let sheddable = || admission.admit_call(Call::new(Criticality::Sheddable));
    let mut early = sheddable();
    assert!(poll_once(&mut early).is_pending()); // t = 0
    clock.advance(101 * MS);
    assert!(timed_out(&mut early));
    let mut stale = sheddable(); // t = 101: the queue stands
    assert!(poll_once(&mut stale).is_pending());
    clock.advance(2 * MS);
    let mut fresh = sheddable(); // t = 103
    assert!(poll_once(&mut fresh).is_pending());
    // Full (2 places): a critical arrival displaces the stale end (the
    // oldest, which a newest-first queue would serve last), not the newest.
    let mut critical = admission.admit_call(Call::new(Criticality::Critical));
    assert!(poll_once(&mut critical).is_pending());
    match poll_once(&mut stale) {
        Poll::Ready(Err(AdmitError::Overloaded(o))) => {
            assert_eq!(o.cause(), OverloadCause::Displaced)
        }
        other => panic!("the stale waiter is displaced, got {other:?}"),
    }
    assert!(
        poll_once(&mut fresh).is_pending(),
        "the newest keeps its place"
    );
    drop(holder);
    assert!(matches!(poll_once(&mut critical), Poll::Ready(Ok(_))));
}

#[test]
fn fifo_with_the_same_workload_keeps_the_queue_timeout_and_the_oldest_first() {
    let (admission, clock) = admission(QueueDiscipline::Fifo);
    let holder = admission.try_admit().unwrap();
    let mut old = wait(&admission);
    clock.advance(50 * MS);
    let second = wait(&admission);
    clock.advance(51 * MS);
    assert!(timed_out(&mut old));
    let mut fresh = vec![second, wait(&admission), wait(&admission)];
    clock.advance(5 * MS);
    assert!(
        fresh.iter_mut().all(|admit| !timed_out(admit)),
        "no 5 ms target"
    );
    drop(holder);
    let (index, _permit) = served(&mut fresh);
    assert_eq!(index, 0, "the oldest first");
}

#[test]
fn codel_needs_a_bounded_queue_and_a_target_shorter_than_its_timeout() {
    let clock = ManualClock::new();
    let build = |policy, target| {
        let options = Options::new().discipline(QueueDiscipline::Codel { target });
        Admission::with_options(4, policy, options, clock.clone()).map(|_| ())
    };
    let parameter = |result: Result<(), edgeshed::InvalidConfig>| result.unwrap_err().parameter();
    assert_eq!(
        parameter(build(Policy::Wait, 5 * MS)),
        Parameter::QueueDiscipline
    );
    assert_eq!(
        parameter(build(Policy::Shed, 5 * MS)),
        Parameter::QueueDiscipline
    );
    assert_eq!(
        parameter(build(Policy::queue(0, TIMEOUT), 5 * MS)),
        Parameter::QueueDiscipline
    );
    assert_eq!(
        parameter(build(Policy::queue(4, TIMEOUT), Duration::ZERO)),
        Parameter::CodelTarget
    );
    assert_eq!(
        parameter(build(Policy::queue(4, TIMEOUT), TIMEOUT)),
        Parameter::CodelTarget
    );
    assert!(build(Policy::queue(4, TIMEOUT), 5 * MS).is_ok());
    let error = build(Policy::Wait, 5 * MS).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("queue_discipline codel needs a bounded queue"),
        "{error}"
    );
}
