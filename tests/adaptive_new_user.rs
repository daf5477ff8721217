#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! An adaptive limit tried as a new user would: `AdaptiveLimitLayer` with
//! `Gradient2` and an initial limit of 20, in front of an
//! origin with 8 slots of 20 ms that queues the excess, offered 5 × its
//! capacity for 20 simulated seconds (a `ManualClock`, 1 ms steps). The
//! limit must come down within 10 s and the origin's concurrency stay
//! ≤ 1.3 × 8 after that, with goodput ≥ 0.9.

mod support;

use edgeshed::error::Overloaded;
use edgeshed::limit::adaptive::{AdaptiveLimitLayer, Bounds, Gradient2, Limit};
use edgeshed::time::ManualClock;
use std::collections::{HashMap, VecDeque};
use std::task::Poll;
use std::time::Duration;
use support::{assert_ready, poll_once, Origin};
use tower_layer::Layer;
use tower_service::Service;

const SLOTS: usize = 8;
const SERVICE_MS: u64 = 20;
const RUN_MS: u64 = 20_000;

/// What the run measured from 10 s on: mean calls at the origin, served
/// calls over what its slots could serve, and the mean limit.
struct Figures {
    concurrency: f64,
    goodput: f64,
    limit: f64,
    first_limit: usize,
}

fn new_user<L: Limit + Clone>(algorithm: L) -> Figures {
    let clock = ManualClock::new();
    let origin = Origin::new();
    let mut service = AdaptiveLimitLayer::new(algorithm)
        .shed_when_full()
        .clock(clock.clone())
        .layer(origin.clone());
    let first_limit = service.admission().stats().limit;
    let mut responses = HashMap::new();
    let mut serving: Vec<(u64, u32)> = Vec::new();
    let mut queue: VecDeque<u32> = VecDeque::new();
    let (mut id, mut served, mut at_origin, mut limits) = (0u32, 0u64, 0u64, 0u64);
    for ms in 0..RUN_MS {
        let settled = ms >= RUN_MS / 2;
        let (done, busy): (Vec<_>, Vec<_>) = serving.drain(..).partition(|(end, _)| *end <= ms);
        serving = busy;
        for (_, done) in done {
            origin.complete(done);
            let mut response = responses.remove(&done).unwrap();
            assert!(matches!(poll_once(&mut response), Poll::Ready(Ok(x)) if x == done));
            served += u64::from(settled);
        }
        while serving.len() < SLOTS {
            let Some(next) = queue.pop_front() else { break };
            serving.push((ms + SERVICE_MS, next));
        }
        // 5 × capacity: 8 slots / 20 ms × 5 = 2 calls per ms.
        for _ in 0..2 {
            id += 1;
            assert_ready(&mut service);
            let mut response = service.call(id);
            match poll_once(&mut response) {
                Poll::Ready(Err(error)) => assert!(error.is::<Overloaded>(), "{error}"),
                Poll::Ready(Ok(_)) => panic!("call {id} answered before the origin did"),
                Poll::Pending => {
                    responses.insert(id, response);
                    if serving.len() < SLOTS {
                        serving.push((ms + SERVICE_MS, id));
                    } else {
                        queue.push_back(id);
                    }
                }
            }
        }
        let stats = service.admission().stats();
        assert!(stats.in_flight <= stats.limit.max(SLOTS * 5));
        if settled {
            at_origin += (serving.len() + queue.len()) as u64;
            limits += stats.limit as u64;
        }
        clock.advance(Duration::from_millis(1));
    }
    let measured = (RUN_MS / 2) as f64;
    Figures {
        concurrency: at_origin as f64 / measured / SLOTS as f64,
        goodput: served as f64 / (measured * SLOTS as f64 / SERVICE_MS as f64),
        limit: limits as f64 / measured,
        first_limit,
    }
}

fn check(name: &str, figures: &Figures) {
    println!(
        "{name}: starts at {}, from 10 s: limit {:.1}, concurrency {:.2} × 8, goodput {:.3}",
        figures.first_limit, figures.limit, figures.concurrency, figures.goodput
    );
    assert_eq!(
        figures.first_limit, 20,
        "{name}: the configured initial limit"
    );
    assert!(
        figures.concurrency <= 1.3,
        "{name}: concurrency {:.2} × 8",
        figures.concurrency
    );
    assert!(
        figures.limit <= 1.3 * SLOTS as f64,
        "{name}: limit {:.1}",
        figures.limit
    );
    assert!(
        figures.goodput >= 0.9,
        "{name}: goodput {:.3}",
        figures.goodput
    );
}

#[test]
fn gradient2_with_initial_limit_20_on_8_slots_comes_down() {
    let bounds = Bounds::new(20, 1, 1000).unwrap();
    check("gradient2", &new_user(Gradient2::new(bounds)));
}
