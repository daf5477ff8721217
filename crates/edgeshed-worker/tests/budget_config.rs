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
        "origins.users.budget.maxInflight is not a known key (expected one of: binding, maxInFlight, leaseTtlMs, unavailable)",
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
