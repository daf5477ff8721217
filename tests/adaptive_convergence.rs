#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! Fleet convergence of the adaptive limits (`adaptive_sim`, simulated time
//! in 1 ms steps): N independent limiters (isolates that share nothing) in
//! front of one origin of capacity C, for 120 simulated seconds, with the
//! edge default bounds (initial 6, min 1, max 64).
//!
//! The matrix: C ∈ {4, 8, 20} × N ∈ {1, 3, 8} × open loop (5 × C) and
//! closed loop (3 × C users) × constant and spread (0.5–1.5 S, S = 20 ms)
//! service times. Gradient2 and Vegas run against an origin that *queues*
//! its excess (their signal is latency); AIMD against one that *sheds* it
//! with instant 503s beyond a small queue (its signal is drops: in front of
//! a queueing origin it never sees one). Over the second minute every run
//! must keep:
//!
//! * the mean concurrency at the origin ≤ 1.3 C,
//! * goodput ≥ 0.9 of the capacity,
//! * the highest client's mean limit ≤ 3 × the lowest one.
//!
//! Where N × min_limit > 1.3 C (C = 4 with N = 8: eight isolates cannot
//! hold fewer than eight calls, 2 C), no per-isolate limit can meet the
//! first bound; that cell must keep the origin's concurrency within 1.3 ×
//! N × min_limit (≤ 2.6 C), near the most a per-isolate limit can do: the
//! fleet limit (`budget.adaptive`) is the answer there.
//!
//! `cargo test --test adaptive_convergence -- --nocapture` prints the table.

mod adaptive_sim;

use adaptive_sim::{run, Load, Origin, Phase, Scenario, Trace};
use edgeshed::limit::adaptive::{Aimd, Gradient2, Limit, Vegas};

const SERVICE_MS: u64 = 20;
const RUN_MS: u64 = 120_000;
const SETTLED_MS: u64 = 60_000;
const SPREAD: f64 = 0.5;

fn origin_for(algorithm: &str, capacity: usize) -> Origin {
    match algorithm {
        "aimd" => Origin::Shedding {
            queue: (capacity / 5).max(1),
            reject_ms: 0,
        },
        _ => Origin::Queueing,
    }
}

fn loads(capacity: usize) -> [(&'static str, Load); 2] {
    [
        ("open 5x", Load::Open { times: 5.0 }),
        (
            "closed 3C",
            Load::Closed {
                users: 3 * capacity,
            },
        ),
    ]
}

/// One cell of the matrix: its figures, and whether they meet the bounds.
fn cell<L: Limit>(
    algorithm: &str,
    make: impl Fn() -> L + Copy,
    capacity: usize,
    clients: usize,
    load: (&str, Load),
    spread: f64,
) -> Option<String> {
    let scenario = Scenario {
        clients,
        load: load.1,
        origin: origin_for(algorithm, capacity),
        service_ms: SERVICE_MS,
        spread,
        phases: vec![Phase::new(RUN_MS, capacity)],
        seed: 0,
    };
    let trace: Trace = run(make, &scenario);
    let concurrency = trace.concurrency(SETTLED_MS, RUN_MS);
    let goodput = trace.goodput(SETTLED_MS, RUN_MS);
    let unfairness = trace.unfairness(SETTLED_MS, RUN_MS);
    let floor = (clients * make().bounds().min()) as f64 / capacity as f64;
    let bound = 1.3 * floor.max(1.0);
    let shape = if spread > 0.0 { "spread" } else { "constant" };
    let row = format!(
        "| {algorithm} | {capacity} | {clients} | {} | {shape} | {concurrency:.2} | {:.2} | {goodput:.3} | {unfairness:.2} | {:.3} | {:?} |",
        load.0,
        trace.concurrency_percentile(SETTLED_MS, RUN_MS, 95.0),
        trace.rejected(SETTLED_MS, RUN_MS),
        trace
            .limits(SETTLED_MS, RUN_MS)
            .iter()
            .map(|l| (l * 10.0).round() / 10.0)
            .collect::<Vec<_>>(),
    );
    println!("{row}");
    let ok = concurrency <= bound && goodput >= 0.9 && unfairness <= 3.0;
    (!ok).then_some(row)
}

/// Every cell of the matrix for one capacity; fails listing the cells that
/// missed a bound.
fn matrix<L: Limit>(algorithm: &str, make: impl Fn() -> L + Copy, capacity: usize) {
    let mut failed = Vec::new();
    for clients in [1, 3, 8] {
        for load in loads(capacity) {
            for spread in [0.0, SPREAD] {
                failed.extend(cell(algorithm, make, capacity, clients, load, spread));
            }
        }
    }
    assert!(
        failed.is_empty(),
        "{} cells missed (concurrency ≤ 1.3 C, goodput ≥ 0.9, max/min limit ≤ 3):\n{}",
        failed.len(),
        failed.join("\n")
    );
}

#[test]
fn gradient2_c4() {
    matrix("gradient2", Gradient2::default, 4);
}

#[test]
fn gradient2_c8() {
    matrix("gradient2", Gradient2::default, 8);
}

#[test]
fn gradient2_c20() {
    matrix("gradient2", Gradient2::default, 20);
}

#[test]
fn vegas_c4() {
    matrix("vegas", Vegas::default, 4);
}

#[test]
fn vegas_c8() {
    matrix("vegas", Vegas::default, 8);
}

#[test]
fn vegas_c20() {
    matrix("vegas", Vegas::default, 20);
}

#[test]
fn aimd_c4() {
    matrix("aimd", Aimd::default, 4);
}

#[test]
fn aimd_c8() {
    matrix("aimd", Aimd::default, 8);
}

#[test]
fn aimd_c20() {
    matrix("aimd", Aimd::default, 20);
}
