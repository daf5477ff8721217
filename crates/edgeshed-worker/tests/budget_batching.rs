//! The fleet budget under steady load, in pure Rust: three isolates share
//! one `LeaseTable` on a manual clock, millisecond by millisecond
//! (`support/fleet_sim.rs`: the real holders and table, 1 ms each way to
//! the table). Measures calls to the table (lease calls and watches) per
//! admitted request, the peak concurrency and goodput, re-learning after a
//! restart, and how fast a late isolate gets its share.
//!
//! `cargo test -p edgeshed-worker --test budget_batching -- --nocapture`
//! prints the figures.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]

#[path = "support/fleet_sim.rs"]
mod sim;

use edgeshed_worker::budget::{FleetView, LeaseTable};
use sim::Sim;

const LIMIT: u32 = 12;
const TTL: u64 = 5_000;

/// What a simulation run measured.
#[derive(Debug)]
struct Figures {
    admitted: u64,
    table_calls: u64,
    shed: u64,
    peak_in_flight: u32,
    utilization: f64,
    /// The fleet view just before learning mode ends, after a restart.
    relearned: Option<FleetView>,
    /// When (ms after its traffic started) isolate b first held 4 permits.
    b_share_after: Option<u64>,
}

/// 3 isolates of local limit `local` share a budget of 12 (lease TTL 5 s);
/// every call takes 20 ms, so the budget serves 0.6 calls/ms. Each isolate
/// gets `per_ms` calls per millisecond (evenly spaced, fractional rates by
/// accumulation) for `duration` ms, b and c only from `late` ms on; a
/// request waits at most 100 ms and at most 50 wait per isolate. The table
/// restarts (loses its memory) at `restart_at`, if given.
fn simulate(local: u32, late: u64, per_ms: f64, duration: u64, restart_at: Option<u64>) -> Figures {
    let mut sim = Sim::new(3, local, LIMIT, TTL, 1);
    sim.max_waiting = 50;
    let start = sim.now;
    let mut credit = [0.0f64; 3];
    let (mut relearned, mut b_share_after, mut busy_ms) = (None, None, 0u64);
    for t in 0..duration {
        if restart_at == Some(t) {
            sim.table = LeaseTable::new(LIMIT, TTL, sim.now);
        }
        if restart_at.is_some_and(|at| t == at + TTL - 1) {
            relearned = Some(sim.table.view(sim.now));
        }
        for (i, credit) in credit.iter_mut().enumerate() {
            if i == 0 || t >= late {
                *credit += per_ms;
            }
            while *credit >= 1.0 {
                *credit -= 1.0;
                sim.arrive_with(i, 100);
            }
        }
        sim.step();
        let in_flight = sim.in_flight();
        assert!(in_flight <= LIMIT, "{in_flight} calls in flight at {t}");
        let held: u32 = sim
            .isolates
            .iter()
            .map(|iso| iso.holder.held(sim.now))
            .sum();
        assert!(held <= LIMIT, "{held} permits held at {t}");
        if b_share_after.is_none() && t >= late && sim.isolates[1].holder.held(sim.now) >= 4 {
            b_share_after = Some(t - late);
        }
        busy_ms += u64::from(in_flight);
    }
    let (shed, admitted, table_calls) = sim.totals();
    let _ = start;
    Figures {
        admitted,
        table_calls,
        shed,
        peak_in_flight: sim.peak,
        utilization: busy_ms as f64 / (f64::from(LIMIT) * duration as f64),
        relearned,
        b_share_after,
    }
}

#[test]
fn batching_costs_at_most_one_table_call_per_ten_admitted_requests() {
    // 1x: 0.2 calls/ms per isolate is the budget's capacity; 10x: 2 per ms
    for (load, per_ms) in [("1x", 0.2), ("10x", 2.0)] {
        let f = simulate(6, 0, per_ms, 60_000, None);
        let ratio = f.table_calls as f64 / f.admitted as f64;
        println!(
            "{load}: {} admitted, {} shed, {} table calls, {ratio:.5} calls/admitted, peak {} in flight, budget utilization {:.3}",
            f.admitted, f.shed, f.table_calls, f.peak_in_flight, f.utilization
        );
        assert!(ratio <= 0.1, "{load}: {ratio}");
        // at steady demand a holder calls only to renew, every 3.75 s, and
        // watches meanwhile: two calls per renewal (plus the first asks
        // while its lease grows to its demand, one round trip each)
        assert!(
            f.table_calls <= 3 * (2 * (60_000 / 3_750 + 2) + 6),
            "{load}: {} calls",
            f.table_calls
        );
        assert!(f.peak_in_flight <= 12);
        if load == "10x" {
            assert!(f.utilization >= 0.9, "goodput {}", f.utilization);
        }
    }
}

#[test]
fn a_restarted_table_relearns_every_holder_within_one_ttl_without_over_admitting() {
    for per_ms in [0.2, 2.0] {
        // simulate() asserts the peak in flight every millisecond
        let f = simulate(6, 0, per_ms, 30_000, Some(12_345));
        let view = f.relearned.unwrap();
        println!(
            "{per_ms}/ms: after a restart, one TTL later: {view:?}, utilization {:.3}",
            f.utilization
        );
        assert!(view.learning);
        assert_eq!(view.holders, 3, "{view:?}");
        assert!(view.leased <= 12);
        if per_ms > 1.0 {
            assert_eq!(view.leased, 12, "{view:?}");
        }
    }
}

#[test]
fn a_holder_arriving_after_another_took_the_whole_budget_gets_its_share_within_a_quarter_ttl() {
    // every isolate may take the whole budget (local limit 12); a takes
    // it, b and c get traffic 1 s later
    for (load, per_ms) in [("1x", 0.2), ("10x", 2.0)] {
        let f = simulate(12, 1_000, per_ms, 60_000, None);
        let ratio = f.table_calls as f64 / f.admitted as f64;
        println!(
            "{load}, late arrivals: b has its share {:?} ms after its traffic started, {} table calls, {ratio:.5} calls/admitted, utilization {:.3}",
            f.b_share_after, f.table_calls, f.utilization
        );
        let after = f.b_share_after.unwrap();
        assert!(after <= TTL / 4 + 100, "{load}: b waited {after} ms");
        assert!(ratio <= 0.1, "{load}: {ratio}");
        assert!(f.peak_in_flight <= 12);
        if load == "10x" {
            assert!(f.utilization >= 0.9, "goodput {}", f.utilization);
        }
    }
}
