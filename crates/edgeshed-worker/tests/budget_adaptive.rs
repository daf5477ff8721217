//! The adaptive fleet limit (`budget.adaptive`): sixteen isolates, one
//! origin of capacity C = 8 that queues its excess, on a manual clock with
//! the real table, holders and algorithm (`support/fleet_sim.rs`). Per-isolate
//! limits cannot divide 8 slots among 16 isolates (each keeps at least 1);
//! the object's one limit can.
//!
//! `cargo test -p edgeshed-worker --test budget_adaptive -- --nocapture`
//! prints the figures.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]

#[path = "support/fleet_sim.rs"]
mod sim;

use edgeshed::limit::adaptive::{AnyLimit, Bounds};
use edgeshed_worker::budget::LeaseTable;
use sim::{Origin, Sim};

const TTL: u64 = 1_000;
const C: usize = 8;
const SERVICE: u64 = 20;

/// What a run measured over its second half.
#[derive(Debug)]
struct Run {
    /// Mean calls at the origin (served and queued) over C.
    load: f64,
    /// Calls served over what the origin could serve.
    goodput: f64,
    /// The fleet limit's range over the second half.
    limits: (u32, u32),
    /// The fleet limit 10 s in.
    at_10s: u32,
    refused: u64,
    table_calls: u64,
}

/// `n` isolates (local limit 8 each) send an open-loop load of `times` × the
/// origin's capacity, evenly spread, for `seconds`, with the fleet limit
/// `algorithm` starting at `initial`.
fn run(algorithm: &str, initial: usize, n: usize, times: f64, spread: bool, seconds: u64) -> Run {
    let bounds = Bounds::new(initial, 1, 256).unwrap();
    let table = LeaseTable::adaptive(AnyLimit::named(algorithm, bounds).unwrap(), TTL, 0, 0);
    let mut sim =
        Sim::new(n, 8, initial as u32, TTL, 1).with_origin(table, Origin::new(C, SERVICE, spread));
    let per_ms = times * C as f64 / SERVICE as f64;
    let (mut credit, mut next, total) = (0.0f64, 0usize, seconds * 1_000);
    let half = total / 2;
    let (mut load_ms, mut served_at_half, mut limits, mut at_10s) =
        (0u64, 0u64, (u32::MAX, 0u32), 0);
    for t in 0..total {
        credit += per_ms;
        while credit >= 1.0 {
            credit -= 1.0;
            sim.arrive(next % n);
            next += 1;
        }
        sim.step();
        let limit = sim.table.limit();
        if t == 10_000 {
            at_10s = limit;
        }
        if t == half {
            served_at_half = sim.origin.as_ref().unwrap().served;
        }
        if t >= half {
            load_ms += sim.origin.as_ref().unwrap().load() as u64;
            limits = (limits.0.min(limit), limits.1.max(limit));
        }
    }
    let origin = sim.origin.as_ref().unwrap();
    let capacity = C as f64 * (total - half) as f64 / SERVICE as f64;
    let (refused, _, table_calls) = sim.totals();
    Run {
        load: load_ms as f64 / ((total - half) as f64 * C as f64),
        goodput: (origin.served - served_at_half) as f64 / capacity,
        limits,
        at_10s,
        refused,
        table_calls,
    }
}

#[test]
fn the_fleet_limit_of_sixteen_isolates_converges_near_c_eight() {
    for (name, initial, spread) in [
        ("gradient2", 8, false),
        ("gradient2", 8, true),
        ("vegas", 8, false),
    ] {
        let r = run(name, initial, 16, 5.0, spread, 120);
        println!(
            "{name}, initial {initial}, spread {spread}: origin load {:.2} C, goodput {:.3}, fleet limit {:?} (second minute), {} refused, {} table calls",
            r.load, r.goodput, r.limits, r.refused, r.table_calls
        );
        assert!(r.load <= 1.3, "{name}: load {} C", r.load);
        assert!(r.goodput >= 0.9, "{name}: goodput {}", r.goodput);
        assert!(r.limits.1 <= 2 * C as u32, "{name}: limit {:?}", r.limits);
    }
}

#[test]
fn a_fleet_limit_that_starts_at_five_c_comes_down() {
    for spread in [false, true] {
        let r = run("gradient2", 5 * C, 16, 5.0, spread, 120);
        println!(
            "gradient2 from 5 C, spread {spread}: {} after 10 s, origin load {:.2} C, goodput {:.3}, fleet limit {:?}",
            r.at_10s, r.load, r.goodput, r.limits
        );
        assert!(r.at_10s <= 2 * C as u32, "10 s in: {}", r.at_10s);
        assert!(r.load <= 1.3, "load {} C", r.load);
        assert!(r.goodput >= 0.9, "goodput {}", r.goodput);
    }
}

fn served(n: usize, rtt_ms: u64) -> edgeshed::limit::adaptive::WindowSummary {
    let mut window = edgeshed::limit::adaptive::WindowSummary::default();
    for _ in 0..n {
        window.record(
            edgeshed::limit::adaptive::Outcome::Served,
            std::time::Duration::from_millis(rtt_ms),
            1,
        );
    }
    window
}

#[test]
fn reports_count_only_in_their_epoch_and_a_drain_waits_for_the_fleet_to_come_down() {
    use edgeshed_worker::budget::FleetLimit;
    let bounds = Bounds::new(8, 1, 64).unwrap();
    let mut fleet = FleetLimit::new(AnyLimit::named("gradient2", bounds).unwrap(), 0);
    // the first window is a drain at the minimum limit
    assert_eq!(
        (fleet.limit(), fleet.draining(), fleet.epoch()),
        (1, true, 1)
    );
    assert!(
        !fleet.record(&served(8, 20), 0, 10),
        "an older epoch's calls"
    );
    assert!(!fleet.record(&served(7, 20), 1, 10), "not a window yet");
    assert!(fleet.record(&served(1, 20), 1, 20));
    assert_eq!(
        (fleet.limit(), fleet.draining(), fleet.epoch()),
        (8, false, 2)
    );
    assert_eq!(fleet.mean_rtt(), Some(std::time::Duration::from_millis(20)));
    // windows of no queue at full use: the limit grows (slow start)
    let mut epoch = fleet.epoch();
    let mut now = 20;
    for _ in 0..15 {
        fleet.in_use(fleet.limit(), now);
        now += 20;
        let calls = fleet.limit() as usize;
        assert!(fleet.record(&served(calls.max(8), 20), epoch, now));
        epoch = fleet.epoch();
    }
    assert!(fleet.limit() > 8, "grew: {}", fleet.limit());
    // the 16th window starts a drain, which opens only once the fleet's
    // calls in flight came down to its limit
    fleet.in_use(fleet.limit(), now);
    now += 20;
    let used = fleet.limit();
    assert!(fleet.record(&served(used as usize, 20), epoch, now));
    assert!(fleet.draining());
    let (drain, settling_epoch) = (fleet.limit(), fleet.epoch());
    assert!(drain < used, "{drain} < {used}");
    assert!(
        !fleet.record(&served(64, 20), settling_epoch, now + 1),
        "still settling"
    );
    fleet.in_use(drain + 1, now + 2);
    assert_eq!(fleet.epoch(), settling_epoch);
    fleet.in_use(drain, now + 3);
    assert_eq!(
        fleet.epoch(),
        settling_epoch + 1,
        "the drain's window opens"
    );
    assert!(fleet.record(
        &served(drain.max(8) as usize, 20),
        settling_epoch + 1,
        now + 40
    ));
    assert!(!fleet.draining());
}
