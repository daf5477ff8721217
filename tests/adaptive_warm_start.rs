#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! A warm start (issue 31): an adaptive limit with the documented defaults
//! (`AdaptiveLimitLayer::new(Gradient2::default())`, initial 6) in front of
//! a handler with no capacity limit of its own. Its first burst is not
//! refused, and in its first 2 s it serves at least 0.9 of what an
//! unlimited service would, at round trips of 20 ms and 600 ms. Before the
//! warm start the first drain held the minimum limit (1) for about 31 round
//! trips from the first finished call: 0.800 served in the first 2 s at
//! 20 ms, and at 600 ms 0.219 of the first 10 s (0.531 now). Manual clock,
//! 1 ms steps; six closed-loop callers, each calling again at once when
//! served and one round trip later when refused.

mod support;

use edgeshed::error::Overloaded;
use edgeshed::limit::adaptive::{AdaptiveLimitLayer, Gradient2, Limit, Vegas};
use edgeshed::time::ManualClock;
use std::collections::HashMap;
use std::task::Poll;
use std::time::Duration;
use support::{assert_ready, poll_once, Origin};
use tower_layer::Layer;
use tower_service::Service;

const CALLERS: usize = 6;

/// What the first 2 s looked like: refusals of the first burst, and served
/// calls over what an unlimited service would have served.
struct FirstSeconds {
    first_burst_refused: usize,
    served_share: f64,
}

fn first_seconds<L: Limit + Clone>(algorithm: L, rtt_ms: u64) -> FirstSeconds {
    let clock = ManualClock::new();
    let origin = Origin::new();
    let mut service = AdaptiveLimitLayer::new(algorithm)
        .shed_when_full()
        .clock(clock.clone())
        .layer(origin.clone());
    let mut responses = HashMap::new();
    // Per caller: when it calls next; per call in flight: when it ends.
    let mut next_call = [0u64; CALLERS];
    let mut ends: Vec<(u64, u32, usize)> = Vec::new();
    let (mut id, mut served, mut first_burst_refused) = (0u32, 0u64, 0usize);
    let run_ms = 2_000;
    for ms in 0..=run_ms {
        let (done, busy): (Vec<_>, Vec<_>) = ends.drain(..).partition(|(end, _, _)| *end <= ms);
        ends = busy;
        for (_, done, caller) in done {
            origin.complete(done);
            let mut response = responses.remove(&done).unwrap();
            assert!(matches!(poll_once(&mut response), Poll::Ready(Ok(x)) if x == done));
            served += 1;
            next_call[caller] = ms;
        }
        for (caller, next) in next_call.iter_mut().enumerate() {
            if *next != ms {
                continue;
            }
            id += 1;
            assert_ready(&mut service);
            let mut response = service.call(id);
            match poll_once(&mut response) {
                Poll::Ready(Err(error)) => {
                    assert!(error.is::<Overloaded>(), "{error}");
                    first_burst_refused += usize::from(ms == 0);
                    *next = ms + rtt_ms;
                }
                Poll::Ready(Ok(_)) => panic!("call {id} answered before the origin did"),
                Poll::Pending => {
                    responses.insert(id, response);
                    ends.push((ms + rtt_ms, id, caller));
                    *next = u64::MAX;
                }
            }
        }
        clock.advance(Duration::from_millis(1));
    }
    let unlimited = (CALLERS as u64 * (run_ms / rtt_ms)) as f64;
    FirstSeconds {
        first_burst_refused,
        served_share: served as f64 / unlimited,
    }
}

fn check(name: &str, figures: &FirstSeconds) {
    println!(
        "{name}: first burst refused {}, served {:.3} of an unlimited service's first 2 s",
        figures.first_burst_refused, figures.served_share
    );
    assert_eq!(figures.first_burst_refused, 0, "{name}: the first burst");
    assert!(
        figures.served_share >= 0.9,
        "{name}: served {:.3} in the first 2 s",
        figures.served_share
    );
}

#[test]
fn gradient2_with_the_defaults_serves_a_healthy_origin_from_the_first_request() {
    for rtt_ms in [20, 600] {
        check(
            &format!("gradient2, {rtt_ms} ms"),
            &first_seconds(Gradient2::default(), rtt_ms),
        );
    }
}

#[test]
fn vegas_with_the_defaults_serves_a_healthy_origin_from_the_first_request() {
    for rtt_ms in [20, 600] {
        check(
            &format!("vegas, {rtt_ms} ms"),
            &first_seconds(Vegas::default(), rtt_ms),
        );
    }
}
