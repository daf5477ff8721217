//! What the offline checker reports (`edgeshed_worker::check::Checked`,
//! behind `scripts/check-config.mjs`): every error with its key, the
//! warnings of a valid configuration, the bindings it needs; and what a
//! misconfigured gateway may show to whom (pure Rust, natively).
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use edgeshed_worker::check::{misconfigured_details, Checked};
use edgeshed_worker::config::{Admin, BindingKind, Config, NamedBinding};
use serde_json::{json, Value};

fn checked(binding: &Value) -> Checked {
    Checked::of(&Config::from_deserializer(binding))
}

/// The warnings' `path message` lines.
fn warnings(binding: &Value) -> Vec<String> {
    let checked = checked(binding);
    assert_eq!(checked.errors, Vec::<String>::new());
    checked.warnings.iter().map(ToString::to_string).collect()
}

#[test]
fn a_typo_and_a_prefix_without_its_slash_are_errors_naming_their_keys() {
    let typo = json!({
        "origins": { "a": { "url": "https://a.example", "maxInflight": 3 } },
        "routes": [ { "prefix": "/a/", "origin": "a" } ]
    });
    let errors = checked(&typo).errors;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with("origins.a.maxInflight is not a known key"));
    let prefix = json!({
        "origins": { "a": { "url": "https://a.example" } },
        "routes": [ { "prefix": "/crit", "origin": "a", "criticality": "critical" } ]
    });
    let checked = checked(&prefix);
    assert_eq!(
        checked.errors,
        vec![r#"routes[0].prefix must end with "/", got "/crit""#.to_string()]
    );
    assert!(checked.warnings.is_empty() && checked.bindings.is_empty());
}

#[test]
fn fair_share_without_any_queue_is_a_warning_naming_the_route() {
    let config = |queue: u64| {
        // A queue's timeout only with a queue (a timeout without one is an error).
        let a = if queue > 0 {
            json!({ "url": "https://a.example", "maxInFlight": 4, "maxQueue": queue, "queueTimeoutMs": 50 })
        } else {
            json!({ "url": "https://a.example", "maxInFlight": 4, "maxQueue": 0 })
        };
        json!({
            "origins": { "a": a },
            "routes": [ { "prefix": "/a/", "origin": "a", "fairness": { "key": "ip" } } ]
        })
    };
    let lines = warnings(&config(0));
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with(
            "routes[0].fairness has no effect: no limit this route passes (global, origins.a) has a queue"
        ),
        "{lines:?}"
    );
    assert!(lines[0].contains("give origins.a a maxQueue"), "{lines:?}");
    assert_eq!(warnings(&config(4)), Vec::<String>::new());
    // A fan-out: it acts at the origin that queues, not at the one that does not.
    let fan_out = json!({
        "global": { "maxQueue": 8, "queueTimeoutMs": 50 },
        "origins": {
            "users": { "url": "https://u.example", "maxQueue": 4, "queueTimeoutMs": 50 },
            "recs": { "url": "https://r.example" }
        },
        "routes": [ { "path": "/agg", "fairness": { "key": "ip" }, "fanout": [
            { "origin": "users", "path": "/u" }, { "origin": "recs", "path": "/r" }, { "origin": "recs", "path": "/s" }
        ] } ]
    });
    assert_eq!(
        warnings(&fan_out),
        vec!["routes[0].fairness does nothing at origins.recs: its maxQueue is 0, and a fair share \
              only refuses a key while other keys wait in the limit's queue (it acts at global, origins.users)"
            .to_string()]
    );
}

#[test]
fn a_criticality_on_one_route_shows_the_reserve_on_every_limit_without_its_own() {
    let binding = json!({
        "global": { "maxInFlight": 10 },
        "origins": {
            "a": { "url": "https://a.example", "maxInFlight": 3 },
            "b": { "url": "https://b.example", "maxInFlight": 1 },
            "c": { "url": "https://c.example", "maxInFlight": 8, "reserve": { "critical": 0, "default": 0 } },
            "d": { "url": "https://d.example", "adaptive": { "algorithm": "aimd", "initialLimit": 5 } }
        },
        "routes": [
            { "prefix": "/a/", "origin": "a" },
            { "prefix": "/b/", "origin": "b", "criticality": "sheddable" }
        ]
    });
    let lines = warnings(&binding);
    let of = |path: &str| {
        lines
            .iter()
            .filter(|l| l.starts_with(&format!("{path} ")))
            .count()
    };
    // b: a limit of 1 has one ceiling for all; c: its own reserve.
    assert_eq!(
        (
            of("global"),
            of("origins.a"),
            of("origins.b"),
            of("origins.c"),
            of("origins.d")
        ),
        (1, 1, 0, 0, 1),
        "{lines:?}"
    );
    let a = lines.iter().find(|l| l.starts_with("origins.a ")).unwrap();
    assert!(
        a.contains("because routes[1].criticality names a criticality"),
        "{a}"
    );
    assert!(
        a.contains("of maxInFlight 3, default calls may hold 2 and sheddable calls 2 while a more critical call holds a permit or waits"),
        "{a}"
    );
    let global = lines.iter().find(|l| l.starts_with("global ")).unwrap();
    assert!(
        global.contains("of maxInFlight 10, default calls may hold 9 and sheddable calls 7"),
        "{global}"
    );
    let d = lines.iter().find(|l| l.starts_with("origins.d ")).unwrap();
    assert!(d.contains("of its adaptive limit (at its initialLimit 5), default calls may hold 4 and sheddable calls 3"), "{d}");
    // Without a criticality, no reserve and no warning.
    let mut plain = binding;
    plain["routes"][1]
        .as_object_mut()
        .unwrap()
        .remove("criticality");
    assert_eq!(warnings(&plain), Vec::<String>::new());
}

#[test]
fn the_bindings_a_configuration_names_and_the_short_lease_warning() {
    let binding = json!({
        "origins": {
            "a": { "url": "https://a.example", "timeoutMs": 3000, "budget": { "maxInFlight": 4, "leaseTtlMs": 1000 } },
            "b": { "url": "https://b.example", "timeoutMs": 1000, "budget": { "binding": "B_BUDGET", "maxInFlight": 2 } }
        },
        "routes": [
            { "prefix": "/a/", "origin": "a", "rateLimit": { "binding": "API_RATE", "key": "ip" } },
            { "prefix": "/b/", "origin": "b", "rateLimit": { "perSecond": 5 } }
        ]
    });
    let checked = checked(&binding);
    let named = |path: &str, name: &str, kind| NamedBinding {
        path: path.into(),
        name: name.into(),
        kind,
    };
    assert_eq!(
        checked.bindings,
        vec![
            named(
                "origins.a.budget.binding",
                "EDGESHED_BUDGET",
                BindingKind::DurableObject
            ),
            named(
                "origins.b.budget.binding",
                "B_BUDGET",
                BindingKind::DurableObject
            ),
            named(
                "routes[0].rateLimit.binding",
                "API_RATE",
                BindingKind::RateLimit
            ),
        ]
    );
    let lines: Vec<String> = checked.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].starts_with(
        "origins.a.budget.leaseTtlMs (1000) should be at least twice origins.a.timeoutMs (3000)"
    ));
    let report: Value = serde_json::from_str(&checked.to_json()).unwrap();
    assert_eq!(
        report["bindings"][2],
        json!({ "path": "routes[0].rateLimit.binding", "name": "API_RATE", "kind": "rate_limit" })
    );
    assert_eq!(report["warnings"][0]["path"], "origins.a.budget.leaseTtlMs");
}

#[test]
fn an_invalid_configuration_keeps_its_valid_admin_access_for_its_details() {
    let read = |binding: Value| Config::from_deserializer(&binding).unwrap_err();
    let broken = json!({ "statsToken": "t0k", "origins": { "a": { "url": "https://secret.example", "maxInflight": 3 } } });
    let error = read(broken);
    assert_eq!(error.admin(), &Admin::Bearer("t0k".into()));
    let details: Value = serde_json::from_str(&misconfigured_details(&error)).unwrap();
    assert_eq!(details["error"], "misconfigured");
    assert!(details["errors"][0]
        .as_str()
        .unwrap()
        .starts_with("origins.a.maxInflight"));
    // Admin keys that are themselves wrong open nothing.
    let error = read(json!({ "statsToken": "", "origins": 3 }));
    assert_eq!(error.admin(), &Admin::Closed);
    let error = read(json!({ "statsPublic": true, "routes": {} }));
    assert_eq!(error.admin(), &Admin::Public);
    assert_eq!(read(json!([])).admin(), &Admin::Closed);
}
