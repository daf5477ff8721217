//! The measuring harness: runs, rounds, medians, ratios.

use std::future::Future;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// One timed run: wall-clock time, and how much of it this thread spent
/// waiting in the kernel's run queue (preempted by other processes).
#[derive(Clone, Copy)]
pub(crate) struct Sample {
    pub(crate) wall: Duration,
    pub(crate) waited: Duration,
}

impl Sample {
    /// Wall-clock time minus run-queue wait: the time this thread was on a CPU.
    pub(crate) fn on_cpu(&self) -> Duration {
        self.wall.saturating_sub(self.waited)
    }
}

/// This thread's accumulated run-queue wait (`run_delay`, the second field of
/// `/proc/thread-self/schedstat`), or `None` where that file does not exist.
/// The kernel adds each wait when the thread gets the CPU back, so a reading
/// taken by the running thread is exact.
pub(crate) fn run_delay() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns = text.split_whitespace().nth(1)?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

pub(crate) type Runner = Box<dyn Fn(&tokio::runtime::Runtime, u64) -> Sample>;

pub(crate) struct Case {
    pub(crate) label: &'static str,
    pub(crate) run: Runner,
    /// ns/op of each measured round: on-CPU time (run-queue wait removed).
    pub(crate) samples: Vec<f64>,
    /// ns/op of each measured round: plain wall-clock time.
    pub(crate) wall: Vec<f64>,
}

impl Case {
    pub(crate) fn new(
        label: &'static str,
        run: impl Fn(&tokio::runtime::Runtime, u64) -> Sample + 'static,
    ) -> Self {
        Self {
            label,
            run: Box::new(run),
            samples: Vec::new(),
            wall: Vec::new(),
        }
    }

    pub(crate) fn median(&self) -> f64 {
        median(&self.samples)
    }

    pub(crate) fn wall_median(&self) -> f64 {
        median(&self.wall)
    }

    pub(crate) fn min(&self) -> f64 {
        self.samples.iter().copied().fold(f64::INFINITY, f64::min)
    }

    pub(crate) fn max(&self) -> f64 {
        self.samples.iter().copied().fold(0.0, f64::max)
    }
}

pub(crate) fn median(samples: &[f64]) -> f64 {
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A group of cases measured together under the same `ops` per round.
pub(crate) struct Group {
    pub(crate) title: &'static str,
    /// Operations per run, and the argument passed to each runner.
    pub(crate) ops: u64,
    pub(crate) arg: u64,
    pub(crate) cases: Vec<Case>,
    /// (case, peer case) index pairs to print a ratio for.
    pub(crate) ratios: Vec<(usize, usize)>,
    /// What the ratios compare, e.g. `edgeshed/tower`.
    pub(crate) versus: &'static str,
    /// A case without any limiter: ratios are also printed net of it.
    pub(crate) baseline: Option<usize>,
}

pub(crate) fn measure(rt: &tokio::runtime::Runtime, groups: &mut [Group], rounds: usize) {
    // Warm-up: one unrecorded run of everything.
    for g in groups.iter() {
        for c in &g.cases {
            black_box((c.run)(rt, g.arg));
        }
    }
    for round in 0..rounds {
        for g in groups.iter_mut() {
            let k = g.cases.len();
            for j in 0..k {
                // Rotate the order each round to spread drift evenly.
                let c = &mut g.cases[(j + round) % k];
                let sample = (c.run)(rt, g.arg);
                let ops = g.ops as f64;
                c.samples.push(sample.on_cpu().as_nanos() as f64 / ops);
                c.wall.push(sample.wall.as_nanos() as f64 / ops);
            }
        }
    }
}

pub(crate) fn report(groups: &[Group]) {
    for g in groups {
        println!();
        println!("## {} ({} ops per round)", g.title, g.ops);
        println!(
            "{:<58} {:>8}  {:>17}  {:>8}",
            "case", "ns/op", "[min - max]", "wall"
        );
        for c in &g.cases {
            println!(
                "{:<58} {:>8.1}  [{:>6.1} - {:>6.1}]  {:>8.1}",
                c.label,
                c.median(),
                c.min(),
                c.max(),
                c.wall_median()
            );
        }
        for &(e, t) in &g.ratios {
            let (e, t) = (&g.cases[e], &g.cases[t]);
            println!(
                "  ratio {:<15} {:<36} = {:.2}  (min/min {:.2}, wall {:.2})",
                g.versus,
                format!("{} / {}", short(e.label), short(t.label)),
                e.median() / t.median(),
                e.min() / t.min(),
                e.wall_median() / t.wall_median()
            );
            if let Some(b) = g.baseline {
                let b = g.cases[b].median();
                println!(
                    "  ratio net of baseline (limiter cost only)        = {:.2}  ({:.1} vs {:.1} ns/op above baseline)",
                    (e.median() - b) / (t.median() - b),
                    e.median() - b,
                    t.median() - b
                );
            }
        }
    }
}

/// The part of a label before the colon.
pub(crate) fn short(label: &str) -> &str {
    label.split(':').next().unwrap_or(label).trim()
}

pub(crate) fn timed<F: Future<Output = u64>>(
    rt: &tokio::runtime::Runtime,
    fut: F,
    expect_ok: u64,
) -> Sample {
    let delay_before = run_delay();
    let start = Instant::now();
    let ok = rt.block_on(fut);
    let wall = start.elapsed();
    let delay_after = run_delay();
    assert_eq!(ok, expect_ok, "unexpected number of successful calls");
    let waited = match (delay_before, delay_after) {
        (Some(before), Some(after)) => after.saturating_sub(before),
        _ => Duration::ZERO,
    };
    Sample { wall, waited }
}
