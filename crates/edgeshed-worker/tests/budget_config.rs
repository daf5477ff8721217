//! `origins.<name>.budget` in the worker's configuration (pure Rust,
//! natively): defaults, every key checked with the other errors at once,
//! unknown keys rejected.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use edgeshed_worker::budget::Unavailable;
use edgeshed_worker::config::{Budget, Config, ConfigError};

fn read(json: &str) -> Result<Config, ConfigError> {
    let json: serde_json::Value = serde_json::from_str(json).unwrap();
    Config::from_deserializer(&json)
}

fn origin_with(budget: &str) -> String {
    format!(r#"{{"origins": {{"users": {{"url": "http://127.0.0.1:9001", "budget": {budget}}}}}}}"#)
}

#[test]
fn the_contract_example_means_what_it_says() {
    let config = read(&origin_with(
        r#"{"binding": "EDGESHED_BUDGET", "maxInFlight": 12, "leaseTtlMs": 5000, "unavailable": "shed"}"#,
    ))
    .unwrap();
    assert_eq!(
        config.origins[0].budget,
        Some(Budget {
            binding: "EDGESHED_BUDGET".into(),
            max_in_flight: 12,
            adaptive: None,
            lease_ttl_ms: 5000,
            unavailable: Unavailable::Shed,
        })
    );
}

#[test]
fn binding_ttl_and_unavailable_have_defaults_and_an_origin_without_budget_has_none() {
    let config = read(&origin_with(r#"{"maxInFlight": 3}"#)).unwrap();
    let budget = config.origins[0].budget.clone().unwrap();
    assert_eq!(budget.binding, "EDGESHED_BUDGET");
    assert_eq!(budget.lease_ttl_ms, 5000);
    assert_eq!(budget.unavailable, Unavailable::Local);
    let plain = read(r#"{"origins": {"users": {"url": "http://127.0.0.1:9001"}}}"#).unwrap();
    assert_eq!(plain.origins[0].budget, None);
}

#[test]
fn every_budget_error_is_reported_at_once_naming_its_key() {
    let error = read(
        r#"{"origins": {
            "users": {"url": "http://a", "maxInflight": 2, "budget": {"maxInflight": 3, "leaseTtlMs": 50, "unavailable": "drop", "binding": "1bad"}},
            "recs": {"url": "http://b", "budget": "EDGESHED_BUDGET"},
            "ads": {"url": "http://c", "budget": {"maxInFlight": 0, "binding": 7, "leaseTtlMs": 2.5}}
        }}"#,
    )
    .unwrap_err();
    let expected = [
        "origins.users.maxInflight is not a known key",
        "origins.users.budget.maxInflight is not a known key (expected one of: binding, maxInFlight, adaptive, leaseTtlMs, unavailable)",
        "origins.users.budget.binding must be a binding name",
        "origins.users.budget.maxInFlight is required",
        "origins.users.budget.leaseTtlMs must be an integer from 100 to 3600000 (milliseconds), got 50",
        "origins.users.budget.unavailable must be \"local\" or \"shed\", got \"drop\"",
        "origins.recs.budget must be an object, got a string",
        "origins.ads.budget.binding must be a string, got a number",
        "origins.ads.budget.maxInFlight must be a positive integer, got 0",
        "origins.ads.budget.leaseTtlMs must be an integer from 100 to 3600000 (milliseconds), got 2.5",
    ];
    for part in expected {
        assert!(
            error.errors().iter().any(|e| e.starts_with(part)),
            "{part} in {:#?}",
            error.errors()
        );
    }
    assert_eq!(
        error.errors().len(),
        expected.len(),
        "{:#?}",
        error.errors()
    );
}

#[test]
fn an_adaptive_fleet_limit_replaces_max_in_flight() {
    let config = read(&origin_with(
        r#"{"adaptive": {"algorithm": "gradient2", "initialLimit": 8, "minLimit": 1, "maxLimit": 256}}"#,
    ))
    .unwrap();
    let budget = config.origins[0].budget.clone().unwrap();
    let adaptive = budget.adaptive.unwrap();
    assert_eq!(adaptive.algorithm, "gradient2");
    assert_eq!(
        (
            adaptive.bounds.initial(),
            adaptive.bounds.min(),
            adaptive.bounds.max()
        ),
        (8, 1, 256)
    );
    assert_eq!(
        budget.max_in_flight, 8,
        "the fleet limit starts at initialLimit"
    );
}

#[test]
fn a_budget_needs_exactly_one_of_max_in_flight_and_adaptive() {
    let both = read(&origin_with(
        r#"{"maxInFlight": 8, "adaptive": {"algorithm": "vegas"}}"#,
    ))
    .unwrap_err();
    assert_eq!(both.errors().len(), 1, "{:#?}", both.errors());
    assert!(
        both.errors()[0]
            .starts_with("origins.users.budget: maxInFlight and adaptive are both given"),
        "{:#?}",
        both.errors()
    );
    let neither = read(&origin_with(r#"{"leaseTtlMs": 1000}"#)).unwrap_err();
    assert!(
        neither.errors()[0].starts_with("origins.users.budget.maxInFlight is required"),
        "{:#?}",
        neither.errors()
    );
    assert!(neither.errors()[0].contains("origins.users.budget.adaptive"));
    let wrong = read(&origin_with(
        r#"{"adaptive": {"algorithm": "gradient", "minLimit": 4, "maxLimit": 2}}"#,
    ))
    .unwrap_err();
    for part in [
        "origins.users.budget.adaptive.algorithm must be one of \"aimd\", \"gradient2\", \"vegas\", got \"gradient\"",
        "origins.users.budget.adaptive.maxLimit must be at least origins.users.budget.adaptive.minLimit (4), got 2",
    ] {
        assert!(
            wrong.errors().iter().any(|e| e.starts_with(part)),
            "{part} in {:#?}",
            wrong.errors()
        );
    }
}
