#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! `QueueWait::Auto` on the manual clock: once the completion rate is
//! measured, a call whose expected wait is longer than one service time is
//! refused at arrival instead of after the queue timeout; a quiet key is
//! not refused for a noisy key's queue; the timeout rule keeps them all.

mod support;

use edgeshed::admission::{Admission, Admit, AdmitError, Call, Options, Policy, QueueWait};
use edgeshed::error::{OverloadCause, Parameter};
use edgeshed::semaphore::Permit;
use edgeshed::time::ManualClock;
use std::task::Poll;
use std::time::Duration;
use support::poll_once;

const MS: Duration = Duration::from_millis(1);

fn admission(wait: QueueWait) -> (Admission<ManualClock>, ManualClock) {
    let clock = ManualClock::new();
    let options = Options::new().queue_wait(wait);
    let policy = Policy::queue(16, 100 * MS);
    (
        Admission::with_options(4, policy, options, clock.clone()).unwrap(),
        clock,
    )
}

fn admitted(admit: &mut Admit<ManualClock>) -> Permit {
    match poll_once(admit) {
        Poll::Ready(Ok(permit)) => permit,
        other => panic!("expected a permit, got {other:?}"),
    }
}

/// Four calls of 50 ms in flight, one round of them already completed, so
/// the completion rate (80 a second) is known; returns the held permits.
fn measured(
    admission: &Admission<ManualClock>,
    clock: &ManualClock,
    key: Option<&str>,
) -> Vec<Permit> {
    let call = || Call::default().with_optional_key(key.map(Into::into));
    let first: Vec<Permit> = (0..4)
        .map(|_| admitted(&mut admission.admit_call(call())))
        .collect();
    let mut waiting = admission.admit_call(call()); // opens the measurement at t = 0
    assert!(poll_once(&mut waiting).is_pending());
    clock.advance(50 * MS);
    drop(first); // four completions in 50 ms
    let mut held = vec![admitted(&mut waiting)];
    held.extend((0..3).map(|_| admitted(&mut admission.admit_call(call()))));
    held
}

/// A burst of `n` calls at once: how many queued and how many were refused
/// at arrival for their expected wait.
fn burst(
    admission: &Admission<ManualClock>,
    n: usize,
    key: Option<&str>,
) -> (Vec<Admit<ManualClock>>, usize) {
    let mut queued = Vec::new();
    let mut refused = 0;
    for _ in 0..n {
        let mut admit =
            admission.admit_call(Call::default().with_optional_key(key.map(Into::into)));
        match poll_once(&mut admit) {
            Poll::Pending => queued.push(admit),
            Poll::Ready(Err(AdmitError::Overloaded(o))) => {
                assert_eq!(o.cause(), OverloadCause::QueueTimeout);
                refused += 1;
            }
            other => panic!("{other:?}"),
        }
    }
    (queued, refused)
}

#[test]
fn a_bursts_excess_is_refused_at_once_and_one_service_time_waits() {
    let (admission, clock) = admission(QueueWait::Auto);
    let _held = measured(&admission, &clock, None);
    let (queued, refused) = burst(&admission, 10, None);
    // One service time's worth (4 calls in flight) may wait; the rest is
    // answered now, not after 100 ms.
    assert_eq!((queued.len(), refused), (4, 6));
    assert_eq!(admission.stats().queue_timeouts, 6);
    assert_eq!(admission.stats().queued, 4);
}

#[test]
fn the_timeout_rule_lets_the_whole_burst_wait() {
    let (admission, clock) = admission(QueueWait::Timeout);
    let _held = measured(&admission, &clock, None);
    let (queued, refused) = burst(&admission, 10, None);
    assert_eq!((queued.len(), refused), (10, 0));
}

#[test]
fn a_quiet_key_is_not_refused_for_a_noisy_keys_queue() {
    let (admission, clock) = admission(QueueWait::Auto);
    let _held = measured(&admission, &clock, Some("noisy"));
    let (_noisy, refused) = burst(&admission, 10, Some("noisy"));
    assert_eq!(refused, 6);
    // Fair queueing serves the quiet key next: its expected wait is short.
    let (quiet, refused) = burst(&admission, 1, Some("quiet"));
    assert_eq!((quiet.len(), refused), (1, 0));
}

#[test]
fn auto_needs_a_bounded_queue() {
    let options = Options::new().queue_wait(QueueWait::Auto);
    let error = Admission::with_options(4, Policy::Shed, options, ManualClock::new()).unwrap_err();
    assert_eq!(error.parameter(), Parameter::MaxQueueWait);
    assert!(error.to_string().contains("bounded queue"), "{error}");
}
