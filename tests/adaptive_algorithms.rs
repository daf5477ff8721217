#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! The rules of each adaptive algorithm, one sample at a time.

use edgeshed::limit::adaptive::{Aimd, Bounds, Gradient2, Limit, Sample, Vegas};
use edgeshed::time::Instant;
use std::time::Duration;

fn at(ms: u64) -> Instant {
    Instant::from_origin(Duration::from_millis(ms))
}

fn sample(start_ms: u64, rtt_ms: u64, in_flight: usize, dropped: bool) -> Sample {
    Sample::new(
        at(start_ms),
        Duration::from_millis(rtt_ms),
        in_flight,
        dropped,
    )
}

fn bounds(initial: usize) -> Bounds {
    Bounds::new(initial, 1, 200).unwrap()
}

#[test]
fn aimd_backs_off_once_for_calls_admitted_before_the_backoff() {
    let mut aimd = Aimd::new(bounds(20), 0.9);
    // Ten calls admitted at t=0 all fail at t=5: one backoff, not ten.
    for _ in 0..10 {
        aimd.update(&sample(0, 5, 20, true));
    }
    assert_eq!(aimd.limit(), 18);
    // A call admitted after that backoff and dropped: the next one.
    assert_eq!(aimd.update(&sample(6, 1, 18, true)), 16);
}

#[test]
fn aimd_grows_by_one_per_round_trip_and_only_when_in_use() {
    let mut aimd = Aimd::new(bounds(10), 0.9);
    for _ in 0..10 {
        aimd.update(&sample(0, 5, 4, false)); // less than half in use
    }
    assert_eq!(aimd.limit(), 10);
    for _ in 0..11 {
        aimd.update(&sample(0, 5, 5, false)); // half in use: about a round trip
    }
    assert_eq!(aimd.limit(), 11);
}

/// Feeds `windows` windows of `len` samples with `rtt_ms` at `in_flight`.
fn feed(limit: &mut impl Limit, windows: usize, rtt_ms: u64, in_flight: impl Fn(usize) -> usize) {
    for _ in 0..windows {
        let len = limit.limit().max(5);
        let in_flight = in_flight(limit.limit());
        for _ in 0..len {
            limit.update(&sample(0, rtt_ms, in_flight, false));
        }
    }
}

#[test]
fn gradient2_holds_while_app_limited_and_grows_without_a_queue() {
    let mut gradient2 = Gradient2::new(bounds(20));
    feed(&mut gradient2, 20, 10, |limit| limit / 2 - 1);
    assert_eq!(gradient2.limit(), 20);
    feed(&mut gradient2, 5, 10, |limit| limit);
    assert!(gradient2.limit() > 20, "{}", gradient2.limit());
}

#[test]
fn gradient2_baseline_does_not_drift_under_sustained_overload() {
    let mut gradient2 = Gradient2::new(bounds(40));
    feed(&mut gradient2, 10, 10, |limit| limit); // baseline 10 ms
    let before = gradient2.limit();
    // The RTT stays at 3x the baseline for a thousand windows: the limit
    // only falls (as published, the long average rises to 30 ms and the
    // limit climbs back by `queue_size` per window).
    feed(&mut gradient2, 1000, 30, |limit| limit);
    assert!(
        gradient2.limit() < before / 2,
        "{} from {before}",
        gradient2.limit()
    );
}

#[test]
fn gradient2_holds_in_the_dead_band_between_growth_and_tolerance() {
    let mut gradient2 = Gradient2::new(bounds(30));
    feed(&mut gradient2, 10, 10, |limit| limit);
    let settled = gradient2.limit();
    feed(&mut gradient2, 50, 14, |limit| limit); // 1.4x: within tolerance 1.5
    assert_eq!(gradient2.limit(), settled);
}

#[test]
fn vegas_probe_drains_for_one_window_and_relearns_the_no_load_rtt() {
    let mut vegas = Vegas::new(bounds(20)).probe_every(2);
    feed(&mut vegas, 1, 10, |limit| limit);
    assert_eq!(vegas.rtt_no_load(), Some(Duration::from_millis(10)));
    let before = vegas.limit();
    // The second window starts a probe: the limit is halved...
    for _ in 0..before.max(5) {
        vegas.update(&sample(0, 20, before, false));
    }
    let probing = vegas.limit();
    assert!(probing <= before / 2, "{probing} from {before}");
    // ...calls admitted after it started measure the new no-load RTT.
    for _ in 0..probing.max(3) {
        vegas.update(&sample(1_000, 15, probing, false));
    }
    assert_eq!(vegas.rtt_no_load(), Some(Duration::from_millis(15)));
    assert!(vegas.limit() > probing);
}

#[test]
fn vegas_shrinks_when_its_queue_exceeds_beta() {
    let mut vegas = Vegas::new(bounds(30)).probe_every(1_000);
    feed(&mut vegas, 1, 10, |limit| limit);
    let before = vegas.limit();
    feed(&mut vegas, 3, 30, |limit| limit); // queue = 2/3 of the limit
    assert!(vegas.limit() < before, "{} from {before}", vegas.limit());
}

#[test]
fn gradient2_does_not_grow_in_a_window_with_a_drop() {
    let mut gradient2 = Gradient2::new(bounds(20));
    feed(&mut gradient2, 1, 10, |limit| limit);
    let before = gradient2.limit();
    for _ in 0..3 {
        let len = gradient2.limit().max(5);
        for index in 0..len {
            gradient2.update(&sample(0, 10, gradient2.limit(), index == 0));
        }
    }
    assert_eq!(gradient2.limit(), before);
}
