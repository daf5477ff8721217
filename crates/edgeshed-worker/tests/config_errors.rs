//! The worker's configuration reports every error at once (up to a cap),
//! not one per edit-and-reload cycle (pure Rust, natively).
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use edgeshed_worker::config::{Config, ConfigError};

/// The worker's own reading (`Config::from_deserializer`), over serde_json.
fn read(json: &str) -> Result<Config, ConfigError> {
    let json: serde_json::Value = serde_json::from_str(json).unwrap();
    Config::from_deserializer(&json)
}

fn parse(json: &str) -> Result<Config, String> {
    read(json).map_err(|e| e.message().to_string())
}

/// Every problem of a configuration is reported at once, in the order of the
/// configuration: several in one section (unknown keys next to bad values),
/// and in every independent section, so one edit-and-reload fixes them all.
#[test]
fn every_error_is_reported_at_once() {
    let error = read(
        r#"{
        "retryAfterSecond": 2,
        "global": {"maxInFlight": 0, "maxInflight": 3},
        "origins": {
            "users": {"url": "ftp://a", "maxInFlight": 1.5, "maxQueu": 1},
            "recs": {"url": "http://b", "maxQueue": 2}
        },
        "routes": [
            {"prefix": "/p", "origin": "ghost"},
            {"path": "/x", "fanout": [
                {"origin": "users", "path": "y"},
                {"origin": "nobody", "path": "/z", "required": "no"}
            ]}
        ]
    }"#,
    )
    .unwrap_err();
    let expected = [
        "EDGESHED.retryAfterSecond is not a known key (expected one of: retryAfterSeconds, statsToken, statsPublic, global, origins, routes)",
        "global.maxInflight is not a known key (expected one of: maxInFlight, maxQueue, queueTimeoutMs, queueDiscipline, codelTargetMs, maxQueueWait, reserve)",
        "global.maxInFlight must be a positive integer, got 0",
        "origins.users.maxQueu is not a known key (expected one of: url, maxInFlight, maxQueue, queueTimeoutMs, queueDiscipline, codelTargetMs, maxQueueWait, reserve, timeoutMs, maxBodyBytes, adaptive, budget)",
        "origins.users.url must use http or https",
        "origins.users.maxInFlight must be a positive integer, got 1.5",
        "origins.recs.queueTimeoutMs is required when origins.recs.maxQueue > 0 (every wait must be bounded)",
        "routes[0].prefix must end with \"/\", got \"/p\"",
        "routes[0].origin names an unknown origin \"ghost\"",
        "routes[1].fanout[0].path must start with \"/\", got \"y\"",
        "routes[1].fanout[1].origin names an unknown origin \"nobody\"",
        "routes[1].fanout[1].required must be a boolean, got a string",
    ];
    let errors = error.errors();
    assert_eq!(errors.len(), expected.len(), "{errors:#?}");
    for (got, want) in errors.iter().zip(expected) {
        assert!(got.starts_with(want), "got {got:?}\nwant {want:?}");
    }
    let message = error.message();
    assert!(
        message.starts_with("12 configuration errors: "),
        "{message}"
    );
    for want in expected {
        assert!(message.contains(want), "{message}\n  lacks {want}");
    }
    // One problem: the message is that problem alone, as before.
    assert_eq!(
        parse(r#"{"origins": {"users": {"url": "http://a", "maxInFlight": 1.5}}}"#).unwrap_err(),
        "origins.users.maxInFlight must be a positive integer, got 1.5"
    );
}

/// A long list is cut after 20 problems, saying how many more there are.
#[test]
fn a_long_list_of_errors_is_cut_and_counted() {
    let origins: Vec<String> = (0..25)
        .map(|i| format!(r#""o{i}": {{"url": "http://a", "maxInFlight": 0}}"#))
        .collect();
    let error = read(&format!(r#"{{"origins": {{{}}}}}"#, origins.join(","))).unwrap_err();
    assert_eq!(error.errors().len(), 25);
    let message = error.message();
    assert!(
        message.starts_with("25 configuration errors: "),
        "{message}"
    );
    assert!(message.ends_with("; and 5 more"), "{message}");
    assert!(message.contains("origins.o19.maxInFlight"), "{message}");
    assert!(!message.contains("origins.o20.maxInFlight"), "{message}");
}
