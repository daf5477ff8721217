//! What criticality, fairness and rate limits add to the stats and metrics:
//! per scope the counts per criticality, `displaced` and `fairShareRefused`;
//! per rate-limited route `rateLimited` and `rateOverflow`.

use super::ScopeMetrics;
use core::fmt::Write;
use edgeshed::admission::{Criticality, CriticalityStats, Stats};

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

/// `,"displaced":…,"fairShareRefused":…,"byCriticality":{…}`: the fields a
/// scope's JSON gains.
pub(super) fn scope_fields(stats: &Stats) -> String {
    let classes: Vec<String> = Criticality::ALL
        .iter()
        .map(|&criticality| {
            let CriticalityStats {
                admitted,
                shed,
                queue_timeouts,
                displaced,
                in_flight,
                queued,
                ..
            } = *stats.by_criticality.get(criticality);
            format!(
                "\"{criticality}\":{{\"admitted\":{admitted},\"shed\":{shed},\"queueTimeouts\":{queue_timeouts},\"displaced\":{displaced},\"inFlight\":{in_flight},\"queued\":{queued}}}"
            )
        })
        .collect();
    format!(
        ",\"displaced\":{},\"fairShareRefused\":{},\"byCriticality\":{{{}}}",
        stats.displaced,
        stats.fair_share_refused,
        classes.join(",")
    )
}

/// `{"<route>": {"rateLimited": n, "rateOverflow": m}, ...}`.
pub(super) fn routes_json(routes: &[RouteMetrics<'_>]) -> String {
    let entries: Vec<String> = routes
        .iter()
        .map(|route| {
            format!(
                "{}:{{\"rateLimited\":{},\"rateOverflow\":{}}}",
                crate::failure::json_string(route.route),
                route.rate_limited,
                route.rate_overflow
            )
        })
        .collect();
    format!("{{{}}}", entries.join(","))
}

/// A Prometheus label value: `\`, `"` and line feeds escaped.
pub(super) fn label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A per-scope counter family: name, help, value.
type ScopedFamily = (&'static str, &'static str, fn(&Stats) -> u64);

/// A per-route counter family: name, help, value.
type RouteFamily = (&'static str, &'static str, fn(&RouteMetrics<'_>) -> u64);

/// A per-criticality family: name, type, help, value.
type ClassFamily = (
    &'static str,
    &'static str,
    &'static str,
    fn(&CriticalityStats) -> u64,
);

/// The families of criticality, fairness and rate limits.
pub(super) fn render(out: &mut String, scopes: &[ScopeMetrics<'_>], routes: &[RouteMetrics<'_>]) {
    let scoped: [ScopedFamily; 2] = [
        (
            "edgeshed_displaced_total",
            "Requests displaced from a full queue by more critical ones (503 displaced).",
            |s| s.displaced,
        ),
        (
            "edgeshed_fair_share_refused_total",
            "Requests refused because their key held more than its fair share (429 fair_share).",
            |s| s.fair_share_refused,
        ),
    ];
    for (name, help, value) in scoped {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
        for scope in scopes {
            let _ = writeln!(
                out,
                "{name}{{scope=\"{}\"}} {}",
                label(scope.scope),
                value(&scope.stats)
            );
        }
    }
    let families: [ClassFamily; 6] = [
        (
            "edgeshed_criticality_admitted_total",
            "counter",
            "Requests admitted, per criticality.",
            |c| c.admitted,
        ),
        (
            "edgeshed_criticality_shed_total",
            "counter",
            "Requests rejected at once, per criticality.",
            |c| c.shed,
        ),
        (
            "edgeshed_criticality_queue_timeouts_total",
            "counter",
            "Requests rejected after their queue timeout, per criticality.",
            |c| c.queue_timeouts,
        ),
        (
            "edgeshed_criticality_displaced_total",
            "counter",
            "Requests displaced from a full queue, per criticality.",
            |c| c.displaced,
        ),
        (
            "edgeshed_criticality_in_flight",
            "gauge",
            "Requests holding a permit, per criticality.",
            |c| c.in_flight as u64,
        ),
        (
            "edgeshed_criticality_queued",
            "gauge",
            "Requests waiting for a permit, per criticality.",
            |c| c.queued as u64,
        ),
    ];
    for (name, kind, help, value) in families {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for scope in scopes {
            for criticality in Criticality::ALL {
                let stats = scope.stats.by_criticality.get(criticality);
                let _ = writeln!(
                    out,
                    "{name}{{scope=\"{}\",criticality=\"{criticality}\"}} {}",
                    label(scope.scope),
                    value(stats)
                );
            }
        }
    }
    let routed: [RouteFamily; 2] = [
        (
            "edgeshed_rate_limited_total",
            "Requests refused by their route's rate limit (429 rate).",
            |r| r.rate_limited,
        ),
        (
            "edgeshed_rate_overflow_total",
            "Requests of new keys decided by their route's shared overflow allowance (the rate limit's key table was full).",
            |r| r.rate_overflow,
        ),
    ];
    for (name, help, value) in routed {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
        for route in routes {
            let _ = writeln!(
                out,
                "{name}{{route=\"{}\"}} {}",
                label(route.route),
                value(route)
            );
        }
    }
}
