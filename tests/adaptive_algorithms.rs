#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! The rules of each adaptive algorithm, one sample at a time.

use edgeshed::limit::adaptive::{Aimd, Bounds, Limit, Sample};
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
