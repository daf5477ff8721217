//! `/__edgeshed/stats`: each scope's limit, counters, counts per criticality
//! and the keys it refused most often; each rate-limited route's counters.

use super::{fraction, RouteMetrics, ScopeMetrics};
use crate::failure::json_string;
use edgeshed::admission::{Criticality, CriticalityStats, RefusedKey, Reserve, Stats};

/// `{"global": {...}, "origins": {"<name>": {...}}, "routes": {"<route>":
/// {...}}}` for `/__edgeshed/stats`: each scope's limit, reserve and
/// ceilings per criticality, counters, counts per criticality and top
/// refused keys (a key by its first 16 bytes, `null` for
/// the requests without one); each rate-limited route's `rateLimited` and
/// `rateOverflow`.
pub fn render_stats_json(scopes: &[ScopeMetrics<'_>], routes: &[RouteMetrics<'_>]) -> String {
    let mut global = String::from("null");
    let mut origins = Vec::new();
    for scope in scopes {
        let mut stats = stats_json(scope);
        match scope.scope.strip_prefix("origin:") {
            Some(name) => {
                if let Some(budget) = scope.budget {
                    stats.pop();
                    stats.push_str(&format!(
                        ",\"leased\":{},\"budgetShed\":{},\"budgetUnavailable\":{}}}",
                        budget.leased, budget.shed, budget.unavailable
                    ));
                }
                origins.push(format!("\"{name}\":{stats}"));
            }
            None => global = stats,
        }
    }
    format!(
        "{{\"global\":{global},\"origins\":{{{}}},\"routes\":{}}}",
        origins.join(","),
        routes_json(routes)
    )
}

fn stats_json(scope: &ScopeMetrics<'_>) -> String {
    let stats = &scope.stats;
    format!(
        "{{\"inFlight\":{},\"queued\":{},\"admitted\":{},\"shed\":{},\"queueTimeouts\":{},\"limit\":{},\"reserve\":{},\"ceilings\":{}{},\"topRefusedKeys\":{}}}",
        stats.in_flight,
        stats.queued,
        stats.admitted,
        stats.shed,
        stats.queue_timeouts,
        stats.limit,
        reserve_json(scope.reserve),
        ceilings_json(&scope.ceilings),
        scope_fields(stats),
        top_refused_json(&scope.top_refused)
    )
}

/// `{"critical":0.1,"default":0.2}`, or `null` for no reserve.
fn reserve_json(reserve: Reserve) -> String {
    if reserve == Reserve::NONE {
        return "null".to_string();
    }
    format!(
        "{{\"critical\":{},\"default\":{}}}",
        fraction(reserve.critical()),
        fraction(reserve.default_share())
    )
}

/// `{"critical":n,"default":n,"sheddable":n}`.
fn ceilings_json(ceilings: &[usize; 3]) -> String {
    let [critical, default, sheddable] = ceilings;
    format!("{{\"critical\":{critical},\"default\":{default},\"sheddable\":{sheddable}}}")
}

/// `,"displaced":…,"fairShareRefused":…,"byCriticality":{…}`: what
/// criticality and fairness add to a scope.
fn scope_fields(stats: &Stats) -> String {
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
                lent,
                ..
            } = *stats.by_criticality.get(criticality);
            format!(
                "\"{criticality}\":{{\"admitted\":{admitted},\"shed\":{shed},\"queueTimeouts\":{queue_timeouts},\"displaced\":{displaced},\"inFlight\":{in_flight},\"queued\":{queued},\"lent\":{lent}}}"
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

/// `[{"key": "<first bytes>" | null, "refused": n, "overcount": m}, ...]`.
fn top_refused_json(top: &[RefusedKey]) -> String {
    let entries: Vec<String> = top
        .iter()
        .map(|refused| {
            let key = refused
                .key
                .as_ref()
                .map_or_else(|| "null".to_string(), |key| json_string(key.shown()));
            format!(
                "{{\"key\":{key},\"refused\":{},\"overcount\":{}}}",
                refused.refused, refused.overcount
            )
        })
        .collect();
    format!("[{}]", entries.join(","))
}

/// `{"<route>": {"rateLimited": n, "rateOverflow": m}, ...}`.
fn routes_json(routes: &[RouteMetrics<'_>]) -> String {
    let entries: Vec<String> = routes
        .iter()
        .map(|route| {
            format!(
                "{}:{{\"rateLimited\":{},\"rateOverflow\":{}}}",
                json_string(route.route),
                route.rate_limited,
                route.rate_overflow
            )
        })
        .collect();
    format!("{{{}}}", entries.join(","))
}
