//! edgeshed vs tower 0.5: `ConcurrencyLimit` and `LoadShed` on tokio's
//! current-thread runtime, measured in one run with a small in-house harness
//! (no criterion, to keep build time low).
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
//! See `BENCHMARKS.md` for what each scenario means and for results.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use futures::stream::{FuturesUnordered, StreamExt};
use std::cell::Cell;
use std::convert::Infallible;
use std::fmt::Debug;
use std::future::{poll_fn, Future};
use std::hint::black_box;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tower::Service;
use tower_layer::Layer;

// ----------------------------------------------------------------------------
// Workloads (generic, so both libraries get exactly the same code around them)
// ----------------------------------------------------------------------------

/// The uncontended / saturation loop: `n` times ready + call + await.
/// Returns how many calls succeeded.
async fn drive<S>(svc: &mut S, n: u64) -> u64
where
    S: Service<u64, Response = u64>,
    S::Error: Debug,
{
    let mut ok = 0;
    for i in 0..n {
        if let Err(e) = poll_fn(|cx| svc.poll_ready(cx)).await {
            panic!("poll_ready failed: {e:?}");
        }
        if black_box(svc.call(black_box(i)).await).is_ok() {
            ok += 1;
        }
    }
    ok
}

/// Returns `Pending` once (waking itself at once), then `Ready`: the response
/// future's single yield that keeps a permit held across a scheduler turn.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

/// 64 callers (each with its own clone of the service, made before timing),
/// polled by one `FuturesUnordered` inside the current-thread runtime; each
/// does `m` ready + call + await. Returns the successful calls.
async fn drive_contended<S>(callers: Vec<S>, m: u64) -> u64
where
    S: Service<u64, Response = u64>,
    S::Error: Debug,
{
    let mut set: FuturesUnordered<_> = callers
        .into_iter()
        .map(|mut svc| async move { drive(&mut svc, m).await })
        .collect();
    let mut ok = 0;
    while let Some(n) = set.next().await {
        ok += n;
    }
    ok
}

/// The same 64 callers as spawned tasks on a `LocalSet` (`spawn_local`)
/// instead of one `FuturesUnordered`.
async fn drive_local<S>(callers: Vec<S>, m: u64) -> u64
where
    S: Service<u64, Response = u64> + 'static,
    S::Error: Debug,
{
    let local = tokio::task::LocalSet::new();
    local
        .run_until(async move {
            let tasks: Vec<_> = callers
                .into_iter()
                .map(|mut svc| tokio::task::spawn_local(async move { drive(&mut svc, m).await }))
                .collect();
            let mut ok = 0;
            for task in tasks {
                ok += task.await.unwrap();
            }
            ok
        })
        .await
}

/// Runs the contended workload over 64 clones of `svc` (cloned before timing)
/// under the chosen driver.
fn contend<S>(rt: &tokio::runtime::Runtime, local: bool, svc: S, m: u64) -> Sample
where
    S: Service<u64, Response = u64> + Clone + 'static,
    S::Error: Debug,
{
    let expect = m * CALLERS as u64;
    let callers = vec![svc; CALLERS];
    if local {
        timed(rt, drive_local(callers, m), expect)
    } else {
        timed(rt, drive_contended(callers, m), expect)
    }
}

// Inner services.
fn echo(x: u64) -> std::future::Ready<Result<u64, Infallible>> {
    std::future::ready(Ok(x))
}

async fn echo_yield(x: u64) -> Result<u64, Infallible> {
    YieldOnce(false).await;
    Ok(x)
}

/// The inner service of the uncontended and saturation cases: an echo whose
/// response is immediately ready (a zero-sized `ServiceFn`, called directly).
fn inner() -> impl Service<u64, Response = u64, Error = Infallible> + Clone {
    tower::service_fn(echo)
}

// ----------------------------------------------------------------------------
// Harness
// ----------------------------------------------------------------------------

/// One timed run: wall-clock time, and how much of it this thread spent
/// waiting in the kernel's run queue (preempted by other processes).
#[derive(Clone, Copy)]
struct Sample {
    wall: Duration,
    waited: Duration,
}

impl Sample {
    /// Wall-clock time minus run-queue wait: the time this thread was on a CPU.
    fn on_cpu(&self) -> Duration {
        self.wall.saturating_sub(self.waited)
    }
}

/// This thread's accumulated run-queue wait (`run_delay`, the second field of
/// `/proc/thread-self/schedstat`), or `None` where that file does not exist.
/// The kernel adds each wait when the thread gets the CPU back, so a reading
/// taken by the running thread is exact.
fn run_delay() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns = text.split_whitespace().nth(1)?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

type Runner = Box<dyn Fn(&tokio::runtime::Runtime, u64) -> Sample>;

struct Case {
    label: &'static str,
    run: Runner,
    /// ns/op of each measured round: on-CPU time (run-queue wait removed).
    samples: Vec<f64>,
    /// ns/op of each measured round: plain wall-clock time.
    wall: Vec<f64>,
}

impl Case {
    fn new(
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

    fn median(&self) -> f64 {
        median(&self.samples)
    }

    fn wall_median(&self) -> f64 {
        median(&self.wall)
    }

    fn min(&self) -> f64 {
        self.samples.iter().copied().fold(f64::INFINITY, f64::min)
    }

    fn max(&self) -> f64 {
        self.samples.iter().copied().fold(0.0, f64::max)
    }
}

fn median(samples: &[f64]) -> f64 {
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A group of cases measured together under the same `ops` per round.
struct Group {
    title: &'static str,
    /// Operations per run, and the argument passed to each runner.
    ops: u64,
    arg: u64,
    cases: Vec<Case>,
    /// (edgeshed case, tower case) index pairs to print a ratio for.
    ratios: Vec<(usize, usize)>,
    /// A case without any limiter: ratios are also printed net of it.
    baseline: Option<usize>,
}

fn measure(rt: &tokio::runtime::Runtime, groups: &mut [Group], rounds: usize) {
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

fn report(groups: &[Group]) {
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
                "  ratio edgeshed/tower  {:<36} = {:.2}  (min/min {:.2}, wall {:.2})",
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
fn short(label: &str) -> &str {
    label.split(':').next().unwrap_or(label).trim()
}

// ----------------------------------------------------------------------------
// Cases
// ----------------------------------------------------------------------------

fn timed<F: Future<Output = u64>>(rt: &tokio::runtime::Runtime, fut: F, expect_ok: u64) -> Sample {
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

fn uncontended(n: u64) -> Group {
    const LIMIT: usize = 64;
    let cases = vec![
        Case::new("baseline: inner service_fn, no limiter", |rt, n| {
            let mut svc = inner();
            timed(rt, drive(&mut svc, n), n)
        }),
        Case::new("edgeshed CL: ConcurrencyLimit::new(inner, 64)", |rt, n| {
            let mut svc = edgeshed::ConcurrencyLimit::new(inner(), LIMIT).unwrap();
            timed(rt, drive(&mut svc, n), n)
        }),
        Case::new(
            "tower CL: tower::limit::ConcurrencyLimit::new(inner, 64)",
            |rt, n| {
                let mut svc = tower::limit::ConcurrencyLimit::new(inner(), LIMIT);
                timed(rt, drive(&mut svc, n), n)
            },
        ),
        Case::new(
            "edgeshed LS+CL: LoadShed::new(ConcurrencyLimit)",
            |rt, n| {
                let mut svc = edgeshed::LoadShed::new(
                    edgeshed::ConcurrencyLimit::new(inner(), LIMIT).unwrap(),
                );
                timed(rt, drive(&mut svc, n), n)
            },
        ),
        Case::new("tower LS+CL: LoadShed::new(ConcurrencyLimit)", |rt, n| {
            let mut svc = tower::load_shed::LoadShed::new(tower::limit::ConcurrencyLimit::new(
                inner(),
                LIMIT,
            ));
            timed(rt, drive(&mut svc, n), n)
        }),
        Case::new("edgeshed shed: ConcurrencyLimitLayer::shed(64)", |rt, n| {
            let mut svc = edgeshed::ConcurrencyLimitLayer::shed(LIMIT)
                .unwrap()
                .layer(inner());
            timed(rt, drive(&mut svc, n), n)
        }),
    ];
    Group {
        title: "1. uncontended: limit 64, one caller, ready + call + await",
        ops: n,
        arg: n,
        cases,
        ratios: vec![(1, 2), (3, 4), (5, 4)],
        baseline: None,
    }
}

const CALLERS: usize = 64;
const CONTENDED_LIMIT: usize = 4;

fn contended(m: u64, local: bool) -> Group {
    let cases = vec![
        Case::new("baseline: inner (yields once), no limiter", move |rt, m| {
            contend(rt, local, tower::service_fn(echo_yield), m)
        }),
        Case::new(
            "edgeshed CL: ConcurrencyLimit::new(inner, 4)",
            move |rt, m| {
                let svc =
                    edgeshed::ConcurrencyLimit::new(tower::service_fn(echo_yield), CONTENDED_LIMIT)
                        .unwrap();
                contend(rt, local, svc, m)
            },
        ),
        Case::new(
            "tower CL: tower::limit::ConcurrencyLimit::new(inner, 4)",
            move |rt, m| {
                let svc = tower::limit::ConcurrencyLimit::new(
                    tower::service_fn(echo_yield),
                    CONTENDED_LIMIT,
                );
                contend(rt, local, svc, m)
            },
        ),
    ];
    Group {
        title: if local {
            "2b. contended, same workload as 64 spawn_local tasks on a LocalSet"
        } else {
            "2. contended: limit 4, 64 callers (FuturesUnordered), response yields once"
        },
        ops: m * CALLERS as u64,
        arg: m,
        cases,
        ratios: vec![(1, 2)],
        baseline: Some(0),
    }
}

fn saturated(n: u64) -> Group {
    let cases = vec![
        Case::new(
            "edgeshed LS+CL: LoadShed::new(ConcurrencyLimit), full",
            |rt, n| {
                let limited = edgeshed::ConcurrencyLimit::new(inner(), 1).unwrap();
                let mut holder = limited.clone();
                hold_permit(rt, &mut holder);
                let mut svc = edgeshed::LoadShed::new(limited);
                let d = timed(rt, drive(&mut svc, n), 0);
                drop(holder);
                d
            },
        ),
        Case::new(
            "tower LS+CL: LoadShed::new(ConcurrencyLimit), full",
            |rt, n| {
                let limited = tower::limit::ConcurrencyLimit::new(inner(), 1);
                let mut holder = limited.clone();
                hold_permit(rt, &mut holder);
                let mut svc = tower::load_shed::LoadShed::new(limited);
                let d = timed(rt, drive(&mut svc, n), 0);
                drop(holder);
                d
            },
        ),
        Case::new(
            "edgeshed shed: ConcurrencyLimitLayer::shed(1), full",
            |rt, n| {
                let limited = edgeshed::ConcurrencyLimitLayer::shed(1)
                    .unwrap()
                    .layer(inner());
                let mut holder = limited.clone();
                hold_permit(rt, &mut holder);
                let mut svc = limited;
                let d = timed(rt, drive(&mut svc, n), 0);
                drop(holder);
                d
            },
        ),
    ];
    Group {
        title: "3. shed under saturation: limit 1 held, ready + call -> Overloaded",
        ops: n,
        arg: n,
        cases,
        ratios: vec![(0, 1), (2, 1)],
        baseline: None,
    }
}

/// Reserves the only permit in `svc` (poll_ready without call) and keeps it.
fn hold_permit<S: Service<u64>>(rt: &tokio::runtime::Runtime, svc: &mut S)
where
    S::Error: Debug,
{
    rt.block_on(poll_fn(|cx| svc.poll_ready(cx))).unwrap();
}

// ----------------------------------------------------------------------------
// Sanity check (untimed): the contended workload really is contended.
// ----------------------------------------------------------------------------

thread_local! {
    static IN_FLIGHT: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

/// `echo_yield` that also records the peak number of calls in flight.
async fn tracked_echo(x: u64) -> Result<u64, Infallible> {
    let now = IN_FLIGHT.with(|c| {
        c.set(c.get() + 1);
        c.get()
    });
    PEAK.with(|p| p.set(p.get().max(now)));
    YieldOnce(false).await;
    IN_FLIGHT.with(|c| c.set(c.get() - 1));
    Ok(x)
}

/// Runs the contended workload once over `tracked_echo`: the peak in flight
/// must reach the limit (and never exceed it).
fn check_contention<S>(rt: &tokio::runtime::Runtime, name: &str, svc: S)
where
    S: Service<u64, Response = u64> + Clone,
    S::Error: Debug,
{
    PEAK.with(|p| p.set(0));
    let m = 50;
    let ok = rt.block_on(drive_contended(vec![svc; CALLERS], m));
    assert_eq!(ok, m * CALLERS as u64);
    let peak = PEAK.with(Cell::get);
    assert_eq!(
        peak, CONTENDED_LIMIT,
        "{name}: peak in flight {peak}, expected {CONTENDED_LIMIT}"
    );
    println!(
        "check: {name} contended workload peaks at {peak} in flight (limit {CONTENDED_LIMIT})"
    );
}

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
    println!("# edgeshed vs tower 0.5 (tokio current-thread runtime)");
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
        uncontended(n),
        contended(m, false),
        contended(m, true),
        saturated(n),
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
