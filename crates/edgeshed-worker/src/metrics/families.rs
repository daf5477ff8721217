//! `/__edgeshed/metrics`: every metric family of the gateway in one table
//! ([`FAMILIES`]: name, type, help and where its samples come from), in the
//! order of the exposition, rendered by one loop. A family is added here
//! and nowhere else.

use super::{fraction, RouteMetrics, ScopeMetrics};
use core::fmt::Write;
use edgeshed::admission::{Criticality, CriticalityStats, Stats};

/// Everything `/__edgeshed/metrics` shows at one moment.
#[derive(Clone, Debug)]
pub struct Exposition<'a> {
    /// Every limiter: the global one first, then each origin's.
    pub scopes: &'a [ScopeMetrics<'a>],
    /// Every rate-limited route.
    pub routes: &'a [RouteMetrics<'a>],
    /// Every budgeted origin's fleet budget.
    pub budgets: &'a [BudgetMetrics<'a>],
    /// The isolate's executor.
    pub isolate: IsolateMetrics,
}

/// A budgeted origin's lease calls and permits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BudgetMetrics<'a> {
    /// The origin's name.
    pub origin: &'a str,
    /// Lease calls to the object.
    pub calls: u64,
    /// Watches opened at the object.
    pub watches: u64,
    /// Lease calls that failed or timed out.
    pub failures: u64,
    /// Calls to the object answered `.overloaded` (never retried).
    pub overloaded: u64,
    /// Requests decided by the `unavailable` fallback.
    pub fallbacks: u64,
    /// Requests refused for want of a fleet permit (503 `budget`).
    pub shed: u64,
    /// Permits this isolate holds under its lease.
    pub leased: u32,
}

/// The isolate's executor and proxied bodies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IsolateMetrics {
    /// Requests cancelled by the runtime whose permits were reclaimed.
    pub reclaimed_tasks: u64,
    /// Requests still running.
    pub live_tasks: u64,
    /// Requests failed because an exception unwound through their step.
    pub lost_tasks: u64,
    /// Task steps delivered in another request's turn, skipped.
    pub foreign_steps: u64,
    /// Proxied bodies still holding their permits.
    pub held_bodies: u64,
}

/// A family's samples: what they are read from, and their labels.
#[derive(Clone, Copy)]
enum Samples {
    /// One per scope: `{scope}`.
    Scope(fn(&Stats) -> u64),
    /// One per scope and criticality: `{scope, criticality}`.
    Criticality(fn(&CriticalityStats) -> u64),
    /// One per scope and criticality of its ceiling: `{scope, criticality}`.
    Ceiling,
    /// The reserve's two shares per scope: `{scope, criticality}` (critical
    /// and default), fractions of the limit.
    Reserve,
    /// A histogram per scope of its admission wait: `{scope}`.
    AdmissionWait,
    /// A histogram per origin of its durations: `{origin}`.
    OriginDuration,
    /// One per scope and top refused key: `{scope, rank, key}`.
    TopRefused,
    /// One per rate-limited route: `{route}`.
    Route(fn(&RouteMetrics<'_>) -> u64),
    /// One for the isolate, without labels.
    Isolate(fn(&IsolateMetrics) -> u64),
    /// One per budgeted origin: `{origin}`; the family is left out when no
    /// origin has a budget.
    Budget(fn(&BudgetMetrics<'_>) -> u64),
}

/// One metric family.
struct Family {
    name: &'static str,
    /// `counter`, `gauge` or `histogram`.
    kind: &'static str,
    help: &'static str,
    samples: Samples,
}

const fn family(
    name: &'static str,
    kind: &'static str,
    help: &'static str,
    samples: Samples,
) -> Family {
    Family {
        name,
        kind,
        help,
        samples,
    }
}

const COUNTER: &str = "counter";
const GAUGE: &str = "gauge";
const HISTOGRAM: &str = "histogram";

/// Every family of `/__edgeshed/metrics`, in the exposition's order.
const FAMILIES: &[Family] = {
    use Samples::*;
    &[
        family("edgeshed_in_flight", GAUGE, "Requests holding a permit.", Scope(|s| s.in_flight as u64)),
        family("edgeshed_queued", GAUGE, "Requests waiting for a permit.", Scope(|s| s.queued as u64)),
        family("edgeshed_limit", GAUGE, "The current limit on permits held at once (moved by the algorithm when adaptive).", Scope(|s| s.limit as u64)),
        family("edgeshed_ceiling", GAUGE, "Requests of each criticality that may hold a permit at once at the current limit: the limit less the reserve kept for more critical ones (while the reserve is lent, lower criticalities may use the whole limit).", Ceiling),
        family("edgeshed_reserve", GAUGE, "The reserve in force, as fractions of the limit: criticality=\"critical\" is kept free of default and sheddable requests, criticality=\"default\" free of sheddable ones on top of it (both 0: no reserve).", Reserve),
        family("edgeshed_admitted_total", COUNTER, "Requests admitted.", Scope(|s| s.admitted)),
        family("edgeshed_shed_total", COUNTER, "Requests rejected at once.", Scope(|s| s.shed)),
        family("edgeshed_queue_timeouts_total", COUNTER, "Requests rejected after their queue timeout.", Scope(|s| s.queue_timeouts)),
        family("edgeshed_admission_wait_seconds", HISTOGRAM, "Time spent waiting for admission.", AdmissionWait),
        family("edgeshed_origin_duration_seconds", HISTOGRAM, "Time from calling an origin to its response headers.", OriginDuration),
        family("edgeshed_displaced_total", COUNTER, "Requests displaced from a full queue by more critical ones (503 displaced).", Scope(|s| s.displaced)),
        family("edgeshed_fair_share_refused_total", COUNTER, "Requests refused because their key held more than its fair share (429 fair_share).", Scope(|s| s.fair_share_refused)),
        family("edgeshed_criticality_admitted_total", COUNTER, "Requests admitted, per criticality.", Criticality(|c| c.admitted)),
        family("edgeshed_criticality_shed_total", COUNTER, "Requests rejected at once, per criticality.", Criticality(|c| c.shed)),
        family("edgeshed_criticality_queue_timeouts_total", COUNTER, "Requests rejected after their queue timeout, per criticality.", Criticality(|c| c.queue_timeouts)),
        family("edgeshed_criticality_displaced_total", COUNTER, "Requests displaced from a full queue, per criticality.", Criticality(|c| c.displaced)),
        family("edgeshed_criticality_in_flight", GAUGE, "Requests holding a permit, per criticality.", Criticality(|c| c.in_flight as u64)),
        family("edgeshed_criticality_queued", GAUGE, "Requests waiting for a permit, per criticality.", Criticality(|c| c.queued as u64)),
        family("edgeshed_reserve_lent", GAUGE, "1 while the reserve a criticality must leave for more critical ones is lent to it (none of them holds a permit, waits or was seen lately), else 0.", Criticality(|c| u64::from(c.lent))),
        family("edgeshed_rate_limited_total", COUNTER, "Requests refused by their route's rate limit (429 rate).", Route(|r| r.rate_limited)),
        family("edgeshed_rate_overflow_total", COUNTER, "Requests of new keys decided by their route's shared overflow allowance (the rate limit's key table was full).", Route(|r| r.rate_overflow)),
        family("edgeshed_top_refused", GAUGE, "The keys each limiter refused most often (429s and 503s; at most 10, rank 1 the most): their refusals, an upper bound (the space-saving algorithm). key is the key's first 16 bytes, \"\" for the requests without a key.", TopRefused),
        family("edgeshed_reclaimed_tasks_total", COUNTER, "Requests cancelled by the runtime whose permits were reclaimed.", Isolate(|i| i.reclaimed_tasks)),
        family("edgeshed_live_tasks", GAUGE, "Requests of this isolate still running.", Isolate(|i| i.live_tasks)),
        family("edgeshed_lost_tasks_total", COUNTER, "Requests failed because an exception unwound through their step.", Isolate(|i| i.lost_tasks)),
        family("edgeshed_foreign_steps_total", COUNTER, "Task steps delivered in another request's turn, skipped.", Isolate(|i| i.foreign_steps)),
        family("edgeshed_held_bodies", GAUGE, "Proxied bodies still holding their permits.", Isolate(|i| i.held_bodies)),
        family("edgeshed_budget_calls_total", COUNTER, "Lease calls to the fleet budget's object.", Budget(|b| b.calls)),
        family("edgeshed_budget_watches_total", COUNTER, "Watches opened at the fleet budget's object (calls it keeps until others need permits).", Budget(|b| b.watches)),
        family("edgeshed_budget_lease_failures_total", COUNTER, "Lease calls to the fleet budget's object that failed or timed out.", Budget(|b| b.failures)),
        family("edgeshed_budget_overloaded_total", COUNTER, "Calls to the fleet budget's object answered with an overloaded error (never retried).", Budget(|b| b.overloaded)),
        family("edgeshed_budget_fallbacks_total", COUNTER, "Requests decided by the budget's unavailable fallback (local limit, or shed): budgetUnavailable in the stats.", Budget(|b| b.fallbacks)),
        family("edgeshed_budget_shed_total", COUNTER, "Requests refused because the fleet had no permit for them while they could wait (503, reason budget).", Budget(|b| b.shed)),
        family("edgeshed_budget_leased", GAUGE, "Permits this isolate holds under its lease.", Budget(|b| u64::from(b.leased))),
    ]
};

/// The Prometheus text exposition (version 0.0.4) of `exposition`.
pub fn render_prometheus(exposition: &Exposition<'_>) -> String {
    let mut out = String::new();
    for family in FAMILIES {
        if matches!(family.samples, Samples::Budget(_)) && exposition.budgets.is_empty() {
            continue;
        }
        let Family {
            name,
            kind,
            help,
            samples,
        } = family;
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        samples_of(&mut out, name, *samples, exposition);
    }
    out
}

/// `family`'s sample lines.
fn samples_of(out: &mut String, name: &str, samples: Samples, of: &Exposition<'_>) {
    match samples {
        Samples::Scope(value) => {
            for scope in of.scopes {
                let _ = writeln!(
                    out,
                    "{name}{{scope=\"{}\"}} {}",
                    label(scope.scope),
                    value(&scope.stats)
                );
            }
        }
        Samples::Criticality(value) => {
            for scope in of.scopes {
                for criticality in Criticality::ALL {
                    let stats = scope.stats.by_criticality.get(criticality);
                    let scope = label(scope.scope);
                    let _ = writeln!(
                        out,
                        "{name}{{scope=\"{scope}\",criticality=\"{criticality}\"}} {}",
                        value(stats)
                    );
                }
            }
        }
        Samples::Ceiling => {
            for scope in of.scopes {
                for (criticality, ceiling) in Criticality::ALL.iter().zip(scope.ceilings) {
                    let scope = label(scope.scope);
                    let _ = writeln!(
                        out,
                        "{name}{{scope=\"{scope}\",criticality=\"{criticality}\"}} {ceiling}"
                    );
                }
            }
        }
        Samples::Reserve => {
            for scope in of.scopes {
                let reserve = scope.reserve;
                let shares = [
                    (Criticality::Critical, reserve.critical()),
                    (Criticality::Default, reserve.default_share()),
                ];
                for (criticality, share) in shares {
                    let (scope, share) = (label(scope.scope), fraction(share));
                    let _ = writeln!(
                        out,
                        "{name}{{scope=\"{scope}\",criticality=\"{criticality}\"}} {share}"
                    );
                }
            }
        }
        Samples::AdmissionWait => {
            for scope in of.scopes {
                let labels = format!("scope=\"{}\"", label(scope.scope));
                scope.admission_wait.render(out, name, &labels);
            }
        }
        Samples::OriginDuration => {
            for scope in of.scopes {
                if let (Some(histogram), Some(origin)) =
                    (scope.origin_duration, scope.scope.strip_prefix("origin:"))
                {
                    histogram.render(out, name, &format!("origin=\"{}\"", label(origin)));
                }
            }
        }
        Samples::TopRefused => {
            for scope in of.scopes {
                for (rank, refused) in scope.top_refused.iter().enumerate() {
                    let key = refused.key.as_ref().map_or("", |key| key.shown());
                    let (scope, key, rank) = (label(scope.scope), label(key), rank + 1);
                    let _ = writeln!(
                        out,
                        "{name}{{scope=\"{scope}\",rank=\"{rank}\",key=\"{key}\"}} {}",
                        refused.refused
                    );
                }
            }
        }
        Samples::Route(value) => {
            for route in of.routes {
                let _ = writeln!(
                    out,
                    "{name}{{route=\"{}\"}} {}",
                    label(route.route),
                    value(route)
                );
            }
        }
        Samples::Isolate(value) => {
            let _ = writeln!(out, "{name} {}", value(&of.isolate));
        }
        Samples::Budget(value) => {
            for budget in of.budgets {
                let _ = writeln!(
                    out,
                    "{name}{{origin=\"{}\"}} {}",
                    label(budget.origin),
                    value(budget)
                );
            }
        }
    }
}

/// A Prometheus label value: `\`, `"` and line feeds escaped.
pub(super) fn label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
