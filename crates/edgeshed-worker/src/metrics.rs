//! Counters and histograms of the worker, rendered as JSON (`/__edgeshed/stats`,
//! `json.rs`) and in the Prometheus text exposition format
//! (`/__edgeshed/metrics`, rendered from one table of metric families:
//! `families.rs`).

mod families;
mod json;

pub use families::{render_prometheus, BudgetMetrics, Exposition, IsolateMetrics};
pub use json::render_stats_json;

use core::fmt::Write;
use core::time::Duration;
use edgeshed::admission::{Criticality, RefusedKey, Reserve, Stats};

/// Histogram bucket upper bounds in microseconds, and as Prometheus prints
/// them in seconds. (Integers and fixed strings only: formatting floats
/// would pull tens of KiB of code into the worker's wasm.)
const BUCKETS: [(u64, &str); 14] = [
    (500, "0.0005"),
    (1_000, "0.001"),
    (2_500, "0.0025"),
    (5_000, "0.005"),
    (10_000, "0.01"),
    (25_000, "0.025"),
    (50_000, "0.05"),
    (100_000, "0.1"),
    (250_000, "0.25"),
    (500_000, "0.5"),
    (1_000_000, "1"),
    (2_500_000, "2.5"),
    (5_000_000, "5"),
    (10_000_000, "10"),
];

/// `micros` as decimal seconds with six decimals, e.g. `1.500000`.
fn seconds(micros: u64) -> String {
    format!("{}.{:06}", micros / 1_000_000, micros % 1_000_000)
}

/// A cumulative histogram of durations with fixed buckets.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histogram {
    /// Observations per bucket (not cumulative), plus one for `+Inf`.
    counts: [u64; BUCKETS.len() + 1],
    sum_micros: u64,
    count: u64,
}

impl Histogram {
    /// Records one duration.
    pub fn observe(&mut self, duration: Duration) {
        let micros = u64::try_from(duration.as_micros()).unwrap_or(u64::MAX);
        let bucket = BUCKETS
            .iter()
            .position(|(bound, _)| micros <= *bound)
            .unwrap_or(BUCKETS.len());
        if let Some(count) = self.counts.get_mut(bucket) {
            *count += 1;
        }
        self.sum_micros = self.sum_micros.saturating_add(micros);
        self.count += 1;
    }

    /// How many durations were recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    fn render(&self, out: &mut String, name: &str, label: &str) {
        // `label` is `name="value"`, its value escaped (families.rs).
        let mut cumulative = 0;
        for ((_, bound), count) in BUCKETS.iter().zip(self.counts.iter()) {
            cumulative += count;
            let _ = writeln!(out, "{name}_bucket{{{label},le=\"{bound}\"}} {cumulative}");
        }
        let _ = writeln!(out, "{name}_bucket{{{label},le=\"+Inf\"}} {}", self.count);
        let _ = writeln!(out, "{name}_sum{{{label}}} {}", seconds(self.sum_micros));
        let _ = writeln!(out, "{name}_count{{{label}}} {}", self.count);
    }
}

/// One limiter's numbers: its scope (`global` or `origin:<name>`), its
/// admission stats and its histograms.
#[derive(Clone, Debug, PartialEq)]
pub struct ScopeMetrics<'a> {
    /// `global`, or `origin:<name>`.
    pub scope: &'a str,
    /// The limiter's state and counters.
    pub stats: Stats,
    /// Time spent waiting for admission.
    pub admission_wait: &'a Histogram,
    /// Time the origin took to answer (origins only).
    pub origin_duration: Option<&'a Histogram>,
    /// The fleet budget's share of this scope (budgeted origins only).
    pub budget: Option<BudgetStats>,
    /// The keys its limiter refused most often, most first.
    pub top_refused: Vec<RefusedKey>,
    /// The reserve in force at its limiter ([`Reserve::NONE`] for none).
    pub reserve: Reserve,
    /// How many requests of each criticality may hold a permit at once now,
    /// in [`Criticality::ALL`] order ([`ceilings`]).
    pub ceilings: [usize; 3],
}

/// What each criticality may hold at once (in [`Criticality::ALL`] order)
/// under `reserve` at its limiter's `limit`, and at most `cap` (a budgeted
/// origin's effective limit, which the fleet budget applies to every
/// criticality alike; `limit` otherwise).
pub fn ceilings(reserve: Reserve, limit: usize, cap: usize) -> [usize; 3] {
    Criticality::ALL.map(|criticality| reserve.ceiling(limit, criticality).min(cap))
}

/// A fraction from 0 to 1 as a decimal of at most six places (`0.1`, `1`):
/// from integer millionths, as formatting floats would pull tens of KiB of
/// code into the worker's wasm.
fn fraction(value: f64) -> String {
    // In [0, 1] (a reserve's share): the cast is exact after rounding.
    let millionths = (value.clamp(0.0, 1.0) * 1e6 + 0.5) as u32;
    let text = format!("{}.{:06}", millionths / 1_000_000, millionths % 1_000_000);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A rate-limited route's numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteMetrics<'a> {
    /// Its `path` (fan-out) or `prefix` (proxy).
    pub route: &'a str,
    /// Requests refused with 429 by its rate limit.
    pub rate_limited: u64,
    /// Requests of new keys decided by its per-isolate rate limit's one
    /// shared overflow allowance, because its key table was full of keys
    /// still limited (allowed or refused; 0 for a Rate Limiting binding).
    pub rate_overflow: u64,
}

/// What a budgeted origin's stats add: `leased`, `budgetShed` and
/// `budgetUnavailable`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BudgetStats {
    /// Permits this isolate holds under its lease.
    pub leased: u32,
    /// Requests refused because the fleet had no permit for them (503,
    /// reason `budget`).
    pub shed: u64,
    /// Requests decided by the budget's `unavailable` fallback (admitted on
    /// the local limit, or shed) because the object failed or answered
    /// `.overloaded`.
    pub unavailable: u64,
}

/// One `Server-Timing` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Timing {
    /// The metric name (a token).
    pub name: String,
    /// Its duration.
    pub duration: Duration,
    /// An optional description.
    pub description: Option<String>,
}

/// The `Server-Timing` header value for `timings`.
pub fn server_timing(timings: &[Timing]) -> String {
    timings
        .iter()
        .map(|t| {
            // Milliseconds with one decimal, from integer tenths.
            let tenths = (t.duration.as_micros() + 50) / 100;
            let millis = format!("{}.{}", tenths / 10, tenths % 10);
            match &t.description {
                Some(desc) => format!(
                    "{};desc=\"{}\";dur={millis}",
                    t.name,
                    desc.replace(['"', '\\'], "")
                ),
                None => format!("{};dur={millis}", t.name),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}
