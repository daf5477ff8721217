//! The worker's configuration: reading and validation (pure Rust,
//! tested natively; the HTTP behaviour is tested on workerd in tests/worker/).
#![cfg(not(target_arch = "wasm32"))]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use edgeshed::admission::Policy;
use edgeshed_worker::config::{Admin, Config, ConfigError, Route};
use std::time::Duration;

/// The worker's own reading (`Config::from_deserializer`), over serde_json
/// here and over serde-wasm-bindgen in the worker.
fn read(json: &str) -> Result<Config, ConfigError> {
    let json: serde_json::Value = serde_json::from_str(json).unwrap();
    Config::from_deserializer(&json)
}

fn parse(json: &str) -> Result<Config, String> {
    read(json).map_err(|e| e.message().to_string())
}

/// The example configuration of the design contract, also a fuzz seed.
/// (The demo configuration lives in wrangler.toml; tests/worker/wrangler.test.mjs
/// runs it in workerd.)
const DESIGN: &str = include_str!("../../../fuzz/seeds/config/design.json");

#[test]
fn the_design_example_is_valid_and_means_what_it_says() {
    let config = parse(DESIGN).unwrap();
    assert_eq!(config.admin, Admin::Bearer("s3cret".into()));
    assert_eq!(config.retry_after_seconds, 1);
    assert_eq!(config.global.max_in_flight, 64);
    assert_eq!(
        config.global.policy(),
        Policy::Queue {
            max_queue: 64,
            timeout: Duration::from_millis(50)
        }
    );
    let users = &config.origins[0];
    assert_eq!(users.name, "users");
    assert_eq!(users.url.origin(), "http://127.0.0.1:9001");
    assert_eq!(users.timeout, Some(Duration::from_millis(1000)));
    assert_eq!(config.origins[1].limit.policy(), Policy::Shed);
    match config.route("/aggregate") {
        Some(Route::FanOut {
            deadline, calls, ..
        }) => {
            assert_eq!(*deadline, Some(Duration::from_millis(250)));
            assert_eq!(calls.len(), 2);
            assert!(calls[0].required);
            assert!(!calls[1].required);
        }
        other => panic!("expected the fan-out route, got {other:?}"),
    }
    assert!(matches!(
        config.route("/proxy/a/b"),
        Some(Route::Proxy { origin: 0, .. })
    ));
    assert_eq!(config.route("/proxy"), None);
    assert_eq!(config.route("/nope"), None);
}

#[test]
fn defaults_follow_the_contract() {
    let config = parse(r#"{"origins": {"a": {"url": "https://a.example"}}, "routes": [{"prefix": "/a/", "origin": "a"}]}"#).unwrap();
    assert_eq!(
        config.global.max_in_flight, 256,
        "global omitted: at most 256, rest shed"
    );
    assert_eq!(config.global.policy(), Policy::Shed);
    assert_eq!(config.origins[0].limit.max_in_flight, 6);
    assert_eq!(
        config.origins[0].timeout,
        Some(Duration::from_secs(30)),
        "no origin call is unbounded"
    );
    assert_eq!(config.origins[0].max_body_bytes, 8 * 1024 * 1024);
    assert_eq!(config.origins[0].limit.policy(), Policy::Shed);
    assert_eq!(config.retry_after_seconds, 1);
    assert_eq!(
        config.admin,
        Admin::Closed,
        "/__edgeshed/* closed unless opened"
    );
    let config = parse(r#"{"origins": {"a": {"url": "http://a"}}, "routes": [{"path": "/x", "fanout": [{"origin": "a", "path": "/y"}]}]}"#).unwrap();
    match &config.routes[0] {
        Route::FanOut {
            calls, deadline, ..
        } => {
            assert!(calls[0].required, "required defaults to true");
            assert_eq!(*deadline, None);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_admin_endpoints_are_closed_unless_opened() {
    assert_eq!(parse("{}").unwrap().admin, Admin::Closed);
    assert_eq!(
        parse(r#"{"statsPublic": false}"#).unwrap().admin,
        Admin::Closed
    );
    assert_eq!(
        parse(r#"{"statsPublic": null}"#).unwrap().admin,
        Admin::Closed,
        "null means omitted"
    );
    assert_eq!(
        parse(r#"{"statsPublic": true}"#).unwrap().admin,
        Admin::Public
    );
    assert_eq!(
        parse(r#"{"statsToken": "t0k", "statsPublic": false}"#)
            .unwrap()
            .admin,
        Admin::Bearer("t0k".into())
    );
}

#[test]
fn a_missing_binding_names_the_binding() {
    let message = ConfigError::missing_binding("env has no EDGESHED")
        .message()
        .to_string();
    assert!(
        message.starts_with("the EDGESHED binding is missing: env has no EDGESHED"),
        "{message}"
    );
    assert!(message.contains("wrangler.toml"), "{message}");
}

#[test]
fn every_invalid_configuration_names_the_key_that_is_wrong() {
    let cases: &[(&str, &str)] = &[
        (r#"[]"#, "EDGESHED must be an object"),
        (
            r#"{"global": {"maxInflight": 3}}"#,
            "global.maxInflight is not a known key",
        ),
        (
            r#"{"origins": {"users": {"url": "http://a", "maxInflight": 3}}}"#,
            "origins.users.maxInflight is not a known key",
        ),
        (
            r#"{"origins": {"users": {"url": "http://a", "maxInFlight": 0}}}"#,
            "origins.users.maxInFlight must be a positive integer",
        ),
        (
            r#"{"origins": {"users": {"url": "http://a", "maxInFlight": -1}}}"#,
            "origins.users.maxInFlight must be a positive integer",
        ),
        (
            r#"{"origins": {"users": {"url": "http://a", "maxInFlight": 1.5}}}"#,
            "origins.users.maxInFlight must be a positive integer",
        ),
        (
            r#"{"origins": {"users": {"url": "http://a", "maxInFlight": "6"}}}"#,
            "origins.users.maxInFlight must be a positive integer, got a string",
        ),
        (
            r#"{"origins": {"users": {"url": "http://a", "maxQueue": 2}}}"#,
            "origins.users.queueTimeoutMs is required when origins.users.maxQueue > 0",
        ),
        (
            r#"{"origins": {"users": {"url": "http://a", "timeoutMs": 0}}}"#,
            "origins.users.timeoutMs must be a positive integer",
        ),
        (
            r#"{"origins": {"users": {}}}"#,
            "origins.users.url is required",
        ),
        (
            r#"{"origins": {"users": {"url": "ftp://a"}}}"#,
            "origins.users.url must use http or https",
        ),
        (
            r#"{"origins": {"users": {"url": "127.0.0.1:9001"}}}"#,
            "origins.users.url must be an absolute http(s) URL",
        ),
        (
            r#"{"origins": {"users": {"url": "http://u:p@a"}}}"#,
            "origins.users.url must not contain user info",
        ),
        (
            r#"{"origins": {"users": {"url": "http://a?x=1"}}}"#,
            "origins.users.url must not have a query",
        ),
        (
            r#"{"origins": {"users": {"url": "http://a:99999"}}}"#,
            "origins.users.url has an invalid port",
        ),
        (
            r#"{"origins": {"bad name": {"url": "http://a"}}}"#,
            "is not a valid origin name",
        ),
        (
            r#"{"routes": [{"prefix": "/p/", "origin": "users"}]}"#,
            "routes[0].origin names an unknown origin",
        ),
        (
            r#"{"origins": {"users": {"url": "http://a"}}, "routes": [{"prefix": "/p", "origin": "users"}]}"#,
            "routes[0].prefix must end with \"/\"",
        ),
        (
            r#"{"origins": {"users": {"url": "http://a"}}, "routes": [{"path": "/x", "fanout": [{"origin": "nope", "path": "/y"}]}]}"#,
            "routes[0].fanout[0].origin names an unknown origin \"nope\"",
        ),
        (
            r#"{"origins": {"users": {"url": "http://a"}}, "routes": [{"path": "/x", "fanout": []}]}"#,
            "routes[0].fanout must name at least one origin call",
        ),
        (
            r#"{"origins": {"users": {"url": "http://a"}}, "routes": [{"path": "/x", "fanout": [{"origin": "users", "path": "y"}]}]}"#,
            "routes[0].fanout[0].path must start with \"/\"",
        ),
        (
            r#"{"origins": {"users": {"url": "http://a"}}, "routes": [{"path": "/x", "fanout": [{"origin": "users", "path": "/y", "required": "yes"}]}]}"#,
            "routes[0].fanout[0].required must be a boolean",
        ),
        (
            r#"{"origins": {"users": {"url": "http://a"}}, "routes": [{"path": "/x", "prefix": "/y/", "origin": "users"}]}"#,
            "routes[0] must have either \"path\" or \"prefix\"",
        ),
        (r#"{"routes": [{}]}"#, "routes[0] needs \"path\""),
        (
            r#"{"retryAfterSeconds": -1}"#,
            "retryAfterSeconds must be an integer from 0 to 86400",
        ),
        (r#"{"statsToken": 5}"#, "statsToken must be a string"),
        (r#"{"statsToken": ""}"#, "statsToken must not be empty"),
        (
            r#"{"statsPublic": "yes"}"#,
            "statsPublic must be a boolean, got a string",
        ),
        (r#"{"statsPublic": 1}"#, "statsPublic must be a boolean"),
        (
            r#"{"statsToken": "t", "statsPublic": true}"#,
            "statsPublic must not be true when statsToken is set",
        ),
        (r#"{"statspublic": true}"#, "statspublic is not a known key"),
        (r#"{"routes": {}}"#, "routes must be an array"),
        (r#"{"origins": []}"#, "origins must be an object"),
    ];
    for (json, expected) in cases {
        let message = parse(json).expect_err(json);
        assert!(
            message.contains(expected),
            "{json}\n  expected: {expected}\n  got:      {message}"
        );
    }
}

#[test]
fn the_longest_legitimate_request_is_bounded_by_queues_and_timeouts() {
    let config = parse(DESIGN).unwrap();
    // global queue 50 ms + slowest origin (recs: no queue, default 30 s) + 5 s
    assert_eq!(
        config.max_request_time(),
        Duration::from_millis(50 + 30_000 + 5_000)
    );
    let config = parse(r#"{"origins": {"a": {"url": "http://a", "maxQueue": 1, "queueTimeoutMs": 100, "timeoutMs": 200}}}"#).unwrap();
    assert_eq!(
        config.max_request_time(),
        Duration::from_millis(100 + 200 + 5_000)
    );
}
