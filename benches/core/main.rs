//! edgeshed vs tower 0.5 (`ConcurrencyLimit`, `LoadShed`) on tokio's
//! current-thread runtime, the criticality path against the plain one, and
//! the GCRA rate limit against governor's `check_key`, measured in one run
//! with a small in-house harness (no criterion, to keep build time low).
//!
//! ```text
//! cargo bench --bench core                          # full run (~4 s of measuring)
//! cargo bench --bench core -- --quick               # smoke run (~0.2 s of measuring)
//! cargo bench --bench core -- --only "edgeshed CL"  # only cases whose label contains it
//! ```
//!
//! Every case runs once as warm-up, then for several rounds of a fixed
//! iteration count; the libraries are interleaved within each round (with a
//! rotating order) so that drift from other load hits both alike. The table
//! shows the median ns/op over the rounds (on-CPU time: wall-clock minus the
//! thread's run-queue wait), min–max in brackets, and the wall-clock median.
//! Today's results: `BENCHMARKS.md`; what each scenario means:
//! `docs/benchmarks-log-2026.md` ("What is measured").

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

mod criticality;
mod harness;
mod rate;
mod tower_cases;
mod workloads;

use harness::{measure, report, run_delay};
use std::time::Instant;
use workloads::{check_contention, tracked_echo, CONTENDED_LIMIT};

// ----------------------------------------------------------------------------

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    // `--only SUBSTR`: run only the cases whose label contains SUBSTR (for
    // profiling one case, e.g. under callgrind); ratios are then not printed.
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1).cloned());
    let (n, m, rounds) = if quick {
        (50_000, 1_000, 3)
    } else {
        (1_000_000, 5_000, 7)
    };

    let nproc = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("# edgeshed vs tower 0.5 (tokio current-thread runtime), criticality path, GCRA vs governor");
    println!(
        "command: cargo bench --bench core{}",
        if quick { " -- --quick" } else { "" }
    );
    println!("argv: {}", args.join(" "));
    println!("nproc: {nproc}");
    println!(
        "rounds: {rounds} measured (+1 warm-up), median ns/op [min - max]; {}",
        if quick { "QUICK mode" } else { "full mode" }
    );
    println!(
        "ns/op = median on-CPU time per op (wall minus run-queue wait, /proc/thread-self/schedstat{}); wall = median wall-clock",
        if run_delay().is_some() { "" } else { " UNAVAILABLE: equals wall" }
    );

    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");

    check_contention(
        &rt,
        "edgeshed",
        edgeshed::ConcurrencyLimit::new(tower::service_fn(tracked_echo), CONTENDED_LIMIT).unwrap(),
    );
    check_contention(
        &rt,
        "tower",
        tower::limit::ConcurrencyLimit::new(tower::service_fn(tracked_echo), CONTENDED_LIMIT),
    );

    let mut groups = vec![
        tower_cases::uncontended(n),
        tower_cases::contended(m, false),
        tower_cases::contended(m, true),
        tower_cases::saturated(n),
        criticality::admission(n),
        criticality::services(n),
        rate::gcra(n, 1_000),
        rate::gcra(n, 10_000),
    ];
    if let Some(only) = &only {
        for g in &mut groups {
            g.cases.retain(|c| c.label.contains(only.as_str()));
            g.ratios.clear();
        }
        groups.retain(|g| !g.cases.is_empty());
    }
    let start = Instant::now();
    measure(&rt, &mut groups, rounds);
    report(&groups);
    println!();
    println!(
        "total measuring time: {:.1} s",
        start.elapsed().as_secs_f64()
    );
}
