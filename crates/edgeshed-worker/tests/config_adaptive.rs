//! `origins.<name>.adaptive`: an adaptive origin limit in place of
//! `maxInFlight` (pure Rust, natively): what it means, and every way it can
//! be wrong, each error naming its key and reported with the others.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use edgeshed::admission::Policy;
use edgeshed::limit::adaptive::Limit;
use edgeshed_worker::config::{Config, ConfigError};
use std::time::Duration;

fn read(json: &str) -> Result<Config, ConfigError> {
    let json: serde_json::Value = serde_json::from_str(json).unwrap();
    Config::from_deserializer(&json)
}

/// A configuration with one origin `users` whose keys are `origin` (JSON).
fn with_origin(origin: &str) -> Result<Config, ConfigError> {
    read(&format!(
        r#"{{"origins": {{"users": {{"url": "http://a", {origin}}}}}}}"#
    ))
}

fn errors(origin: &str) -> Vec<String> {
    with_origin(origin).unwrap_err().errors().to_vec()
}

#[test]
fn an_adaptive_origin_starts_at_its_initial_limit_and_keeps_its_queue() {
    let config = with_origin(
        r#""adaptive": {"algorithm": "gradient2", "initialLimit": 6, "minLimit": 1, "maxLimit": 64},
           "maxQueue": 6, "queueTimeoutMs": 20"#,
    )
    .unwrap();
    let origin = &config.origins[0];
    let adaptive = origin.adaptive.unwrap();
    assert_eq!(adaptive.algorithm, "gradient2");
    let bounds = adaptive.bounds;
    assert_eq!((bounds.initial(), bounds.min(), bounds.max()), (6, 1, 64));
    assert_eq!(
        origin.limit.max_in_flight, 6,
        "the semaphore starts at initialLimit"
    );
    assert_eq!(
        origin.limit.policy(),
        Policy::Queue {
            max_queue: 6,
            timeout: Duration::from_millis(20)
        }
    );
    let algorithm = adaptive.build().unwrap();
    assert_eq!((algorithm.name(), algorithm.limit()), ("gradient2", 6));
}

#[test]
fn every_algorithm_is_accepted_and_the_bounds_have_edge_defaults() {
    for name in ["aimd", "gradient2", "vegas"] {
        let config = with_origin(&format!(r#""adaptive": {{"algorithm": "{name}"}}"#)).unwrap();
        let adaptive = config.origins[0].adaptive.unwrap();
        assert_eq!(adaptive.algorithm, name);
        assert_eq!(adaptive.build().unwrap().name(), name);
        let b = adaptive.bounds;
        assert_eq!((b.initial(), b.min(), b.max()), (6, 1, 64), "{name}");
    }
    // An omitted initialLimit is 6 brought into [minLimit, maxLimit].
    let low = with_origin(r#""adaptive": {"algorithm": "aimd", "maxLimit": 4}"#).unwrap();
    assert_eq!(low.origins[0].adaptive.unwrap().bounds.initial(), 4);
    assert_eq!(low.origins[0].limit.max_in_flight, 4);
    let high = with_origin(r#""adaptive": {"algorithm": "aimd", "minLimit": 10}"#).unwrap();
    assert_eq!(high.origins[0].adaptive.unwrap().bounds.initial(), 10);
    // A fixed origin has no adaptive limit; null means omitted.
    let fixed = with_origin(r#""maxInFlight": 3, "adaptive": null"#).unwrap();
    assert_eq!(fixed.origins[0].adaptive, None);
    assert_eq!(fixed.origins[0].limit.max_in_flight, 3);
}

#[test]
fn max_in_flight_and_adaptive_exclude_each_other() {
    assert_eq!(
        errors(r#""maxInFlight": 4, "adaptive": {"algorithm": "aimd"}"#),
        ["origins.users: maxInFlight and adaptive are both given (choose one: a fixed maxInFlight, or an adaptive limit)"]
    );
}

#[test]
fn the_algorithm_is_required_and_must_be_known() {
    assert_eq!(
        errors(r#""adaptive": {"initialLimit": 4}"#),
        [r#"origins.users.adaptive.algorithm is required (one of "aimd", "gradient2", "vegas")"#]
    );
    assert_eq!(
        errors(r#""adaptive": {"algorithm": "Gradient2"}"#),
        [
            r#"origins.users.adaptive.algorithm must be one of "aimd", "gradient2", "vegas", got "Gradient2""#
        ]
    );
    assert_eq!(
        errors(r#""adaptive": {"algorithm": 2}"#),
        ["origins.users.adaptive.algorithm must be a string, got a number"]
    );
    assert_eq!(
        errors(r#""adaptive": "gradient2""#),
        ["origins.users.adaptive must be an object, got a string"]
    );
}

#[test]
fn bad_bounds_name_the_key() {
    let cases: &[(&str, &str)] = &[
        (
            r#""adaptive": {"algorithm": "aimd", "minLimit": 0}"#,
            "origins.users.adaptive.minLimit must be a positive integer, got 0",
        ),
        (
            r#""adaptive": {"algorithm": "aimd", "maxLimit": 2.5}"#,
            "origins.users.adaptive.maxLimit must be a positive integer, got 2.5",
        ),
        (
            r#""adaptive": {"algorithm": "aimd", "initialLimit": "6"}"#,
            "origins.users.adaptive.initialLimit must be a positive integer, got a string",
        ),
        (
            r#""adaptive": {"algorithm": "aimd", "minLimit": 8, "maxLimit": 4}"#,
            "origins.users.adaptive.maxLimit must be at least origins.users.adaptive.minLimit (8), got 4",
        ),
        (
            r#""adaptive": {"algorithm": "vegas", "initialLimit": 10, "minLimit": 2, "maxLimit": 8}"#,
            "origins.users.adaptive.initialLimit must lie within [origins.users.adaptive.minLimit, origins.users.adaptive.maxLimit] = [2, 8], got 10",
        ),
        (
            r#""adaptive": {"algorithm": "vegas", "initialLimit": 1, "minLimit": 2}"#,
            "origins.users.adaptive.initialLimit must lie within [origins.users.adaptive.minLimit, origins.users.adaptive.maxLimit] = [2, 64], got 1",
        ),
    ];
    for (origin, want) in cases {
        assert_eq!(errors(origin), [*want], "{origin}");
    }
}

#[test]
fn unknown_keys_inside_are_rejected_and_every_error_is_reported() {
    assert_eq!(
        errors(r#""adaptive": {"algorithm": "aimd", "maxlimit": 9}"#),
        ["origins.users.adaptive.maxlimit is not a known key (expected one of: algorithm, initialLimit, minLimit, maxLimit)"]
    );
    // Everything at once: inside adaptive, next to it, and elsewhere.
    let error = read(
        r#"{
        "origins": {
            "users": {"url": "http://a", "maxInFlight": 2,
                      "adaptive": {"algorithm": "reno", "initalLimit": 3, "maxLimit": 0}},
            "recs": {"url": "ftp://b", "adaptive": {"algorithm": "vegas"}}
        }
    }"#,
    )
    .unwrap_err();
    let expected = [
        "origins.users: maxInFlight and adaptive are both given",
        "origins.users.adaptive.initalLimit is not a known key",
        r#"origins.users.adaptive.algorithm must be one of "aimd", "gradient2", "vegas", got "reno""#,
        "origins.users.adaptive.maxLimit must be a positive integer, got 0",
        "origins.recs.url must use http or https",
    ];
    let got = error.errors();
    assert_eq!(got.len(), expected.len(), "{got:#?}");
    for (got, want) in got.iter().zip(expected) {
        assert!(got.starts_with(want), "got {got:?}\nwant {want:?}");
    }
    assert!(error.message().starts_with("5 configuration errors: "));
}
