//! What the gateway's stats and metrics add for criticality, fairness and
//! rate limits (DESIGN, "Criticality, fairness and rate limits"): counts
//! per criticality and per route, top refused keys (natively).
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]

use edgeshed::admission::{Admission, Criticality, Reserve};
use edgeshed::Key;
use edgeshed_worker::metrics::{
    ceilings, render_prometheus, render_stats_json, Exposition, Histogram, IsolateMetrics,
    RouteMetrics, ScopeMetrics,
};
use serde_json::{json, Value};

#[test]
fn stats_and_metrics_count_per_criticality_and_per_route() {
    let admission = Admission::wait(4).unwrap();
    let permits: Vec<_> = [
        Criticality::Critical,
        Criticality::Sheddable,
        Criticality::Sheddable,
    ]
    .into_iter()
    .map(|c| admission.try_admit_as(c).unwrap())
    .collect();
    let wait = Histogram::default();
    let scopes = [ScopeMetrics {
        scope: "origin:users",
        stats: admission.stats(),
        admission_wait: &wait,
        origin_duration: Some(&wait),
        budget: None,
        top_refused: Vec::new(),
        reserve: Reserve::default(),
        ceilings: ceilings(Reserve::default(), 4, 4),
    }];
    let routes = [RouteMetrics {
        route: "/a\"pi/",
        rate_limited: 4,
        rate_overflow: 7,
    }];
    let stats: Value = serde_json::from_str(&render_stats_json(&scopes, &routes)).unwrap();
    let users = &stats["origins"]["users"];
    assert_eq!(users["displaced"], 0);
    assert_eq!(users["fairShareRefused"], 0);
    assert_eq!(users["byCriticality"]["sheddable"]["admitted"], 2);
    assert_eq!(users["byCriticality"]["sheddable"]["inFlight"], 2);
    assert_eq!(users["byCriticality"]["critical"]["inFlight"], 1);
    assert_eq!(users["byCriticality"]["default"]["admitted"], 0);
    // What the limit of 4 allows each criticality under the default reserve.
    assert_eq!(users["reserve"], json!({"critical": 0.1, "default": 0.2}));
    assert_eq!(
        users["ceilings"],
        json!({"critical": 4, "default": 3, "sheddable": 2})
    );
    assert_eq!(
        stats["routes"],
        json!({"/a\"pi/": {"rateLimited": 4, "rateOverflow": 7}})
    );
    let text = render_prometheus(&Exposition {
        scopes: &scopes,
        routes: &routes,
        budgets: &[],
        isolate: IsolateMetrics::default(),
    });
    for line in [
        "edgeshed_criticality_admitted_total{scope=\"origin:users\",criticality=\"sheddable\"} 2",
        "edgeshed_criticality_in_flight{scope=\"origin:users\",criticality=\"critical\"} 1",
        "edgeshed_fair_share_refused_total{scope=\"origin:users\"} 0",
        "edgeshed_displaced_total{scope=\"origin:users\"} 0",
        "edgeshed_rate_limited_total{route=\"/a\\\"pi/\"} 4",
        "# TYPE edgeshed_rate_limited_total counter",
        "edgeshed_rate_overflow_total{route=\"/a\\\"pi/\"} 7",
        "# TYPE edgeshed_rate_overflow_total counter",
        "# TYPE edgeshed_ceiling gauge",
        "edgeshed_ceiling{scope=\"origin:users\",criticality=\"critical\"} 4",
        "edgeshed_ceiling{scope=\"origin:users\",criticality=\"default\"} 3",
        "edgeshed_ceiling{scope=\"origin:users\",criticality=\"sheddable\"} 2",
        "edgeshed_reserve{scope=\"origin:users\",criticality=\"critical\"} 0.1",
        "edgeshed_reserve{scope=\"origin:users\",criticality=\"default\"} 0.2",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
    drop(permits);
}

#[test]
fn top_refused_keys_show_first_bytes_only_escaped_and_ranked() {
    use edgeshed::admission::RefusedKey;
    use edgeshed_worker::metrics::BudgetMetrics;
    let admission = Admission::wait(4).unwrap();
    let wait = Histogram::default();
    let long = format!("tenant \"q\"\\{}", "x".repeat(300));
    let scopes = [ScopeMetrics {
        scope: "origin:users",
        stats: admission.stats(),
        admission_wait: &wait,
        origin_duration: Some(&wait),
        budget: None,
        top_refused: vec![
            RefusedKey {
                key: Some(Key::from(long.as_str())),
                refused: 9,
                overcount: 2,
            },
            RefusedKey {
                key: None,
                refused: 4,
                overcount: 0,
            },
        ],
        reserve: Reserve::NONE,
        ceilings: [4; 3],
    }];
    let stats: Value = serde_json::from_str(&render_stats_json(&scopes, &[])).unwrap();
    assert_eq!(stats["origins"]["users"]["reserve"], Value::Null);
    assert_eq!(
        stats["origins"]["users"]["ceilings"],
        json!({"critical": 4, "default": 4, "sheddable": 4})
    );
    assert_eq!(
        stats["origins"]["users"]["topRefusedKeys"],
        json!([
            {"key": "tenant \"q\"\\xxxxx", "refused": 9, "overcount": 2},
            {"key": null, "refused": 4, "overcount": 0},
        ])
    );
    let exposition = |budgets| {
        render_prometheus(&Exposition {
            scopes: &scopes,
            routes: &[],
            budgets,
            isolate: IsolateMetrics::default(),
        })
    };
    let text = exposition(&[]);
    assert!(!text.contains(&long[..20]), "never the whole value");
    for line in [
        "# TYPE edgeshed_top_refused gauge",
        "edgeshed_top_refused{scope=\"origin:users\",rank=\"1\",key=\"tenant \\\"q\\\"\\\\xxxxx\"} 9",
        "edgeshed_top_refused{scope=\"origin:users\",rank=\"2\",key=\"\"} 4",
        "edgeshed_reserve{scope=\"origin:users\",criticality=\"default\"} 0",
        "edgeshed_live_tasks 0",
    ] {
        assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
    }
    // The budget's families only when an origin has a budget.
    assert!(!text.contains("edgeshed_budget_"));
    let budget = [BudgetMetrics {
        origin: "users",
        leased: 3,
        ..BudgetMetrics::default()
    }];
    let text = exposition(&budget);
    assert!(text
        .lines()
        .any(|l| l == "edgeshed_budget_leased{origin=\"users\"} 3"));
    assert!(text.ends_with("edgeshed_budget_leased{origin=\"users\"} 3\n"));
}
