//! Counters and histograms of the worker, rendered as JSON (`/__edgeshed/stats`)
//! and in the Prometheus text exposition format (`/__edgeshed/metrics`).

mod classes;

pub use classes::RouteMetrics;

use core::fmt::Write;
use core::time::Duration;
use edgeshed::admission::Stats;

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

fn stats_json(stats: &Stats) -> String {
    format!(
        "{{\"inFlight\":{},\"queued\":{},\"admitted\":{},\"shed\":{},\"queueTimeouts\":{},\"limit\":{}{}}}",
        stats.in_flight,
        stats.queued,
        stats.admitted,
        stats.shed,
        stats.queue_timeouts,
        stats.limit,
        classes::scope_fields(stats)
    )
}

/// `{"global": {...}, "origins": {"<name>": {...}}, "routes": {"<route>":
/// {...}}}` for `/__edgeshed/stats`: each scope's limit, counters and
/// counts per criticality; each rate-limited route's `rateLimited` and `rateOverflow`.
pub fn render_stats_json(scopes: &[ScopeMetrics<'_>], routes: &[RouteMetrics<'_>]) -> String {
    let mut global = String::from("null");
    let mut origins = Vec::new();
    for scope in scopes {
        match scope.scope.strip_prefix("origin:") {
            Some(name) => {
                let mut stats = stats_json(&scope.stats);
                if let Some(budget) = scope.budget {
                    stats.pop();
                    stats.push_str(&format!(
                        ",\"leased\":{},\"budgetShed\":{},\"budgetUnavailable\":{}}}",
                        budget.leased, budget.shed, budget.unavailable
                    ));
                }
                origins.push(format!("\"{name}\":{stats}"));
            }
            None => global = stats_json(&scope.stats),
        }
    }
    format!(
        "{{\"global\":{global},\"origins\":{{{}}},\"routes\":{}}}",
        origins.join(","),
        classes::routes_json(routes)
    )
}

/// A metric family derived from [`Stats`]: name, type, help, value.
type Family = (&'static str, &'static str, &'static str, fn(&Stats) -> u64);

/// The Prometheus text exposition (version 0.0.4) of every scope and
/// rate-limited route.
pub fn render_prometheus(scopes: &[ScopeMetrics<'_>], routes: &[RouteMetrics<'_>]) -> String {
    let mut out = String::new();
    let families: [Family; 6] = [
        (
            "edgeshed_in_flight",
            "gauge",
            "Requests holding a permit.",
            |s| s.in_flight as u64,
        ),
        (
            "edgeshed_queued",
            "gauge",
            "Requests waiting for a permit.",
            |s| s.queued as u64,
        ),
        (
            "edgeshed_limit",
            "gauge",
            "The current limit on permits held at once (moved by the algorithm when adaptive).",
            |s| s.limit as u64,
        ),
        (
            "edgeshed_admitted_total",
            "counter",
            "Requests admitted.",
            |s| s.admitted,
        ),
        (
            "edgeshed_shed_total",
            "counter",
            "Requests rejected at once.",
            |s| s.shed,
        ),
        (
            "edgeshed_queue_timeouts_total",
            "counter",
            "Requests rejected after their queue timeout.",
            |s| s.queue_timeouts,
        ),
    ];
    for (name, kind, help, value) in families {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        for scope in scopes {
            let _ = writeln!(
                out,
                "{name}{{scope=\"{}\"}} {}",
                scope.scope,
                value(&scope.stats)
            );
        }
    }
    let name = "edgeshed_admission_wait_seconds";
    let _ = writeln!(out, "# HELP {name} Time spent waiting for admission.");
    let _ = writeln!(out, "# TYPE {name} histogram");
    for scope in scopes {
        scope
            .admission_wait
            .render(&mut out, name, &format!("scope=\"{}\"", scope.scope));
    }
    let name = "edgeshed_origin_duration_seconds";
    let _ = writeln!(
        out,
        "# HELP {name} Time from calling an origin to its response headers."
    );
    let _ = writeln!(out, "# TYPE {name} histogram");
    for scope in scopes {
        if let (Some(histogram), Some(origin)) =
            (scope.origin_duration, scope.scope.strip_prefix("origin:"))
        {
            histogram.render(&mut out, name, &format!("origin=\"{origin}\""));
        }
    }
    classes::render(&mut out, scopes, routes);
    out
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
