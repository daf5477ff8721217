//! The worker's criticality, fairness, rate-limit and queueing keys
//! (DESIGN, "Criticality, fairness and rate limits"): read, defaulted and
//! refused with errors that name the key (pure Rust, natively).
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use core::time::Duration;
use edgeshed::admission::{Criticality, QueueDiscipline, QueueWait, Reserve};
use edgeshed_worker::config::{Config, KeySource, RateLimit};

fn read(json: &str) -> Result<Config, Vec<String>> {
    let json: serde_json::Value = serde_json::from_str(json).unwrap();
    Config::from_deserializer(&json).map_err(|error| error.errors().to_vec())
}

/// A configuration with origin `a` and one route (`route`, a JSON object body).
fn with_route(route: &str) -> Result<Config, Vec<String>> {
    read(&format!(
        r#"{{"origins": {{"a": {{"url": "http://a"}}}}, "routes": [{{{route}}}]}}"#
    ))
}

#[test]
fn a_route_names_its_criticality_fairness_key_and_rate() {
    let config = with_route(
        r#""prefix": "/p/", "origin": "a", "criticality": "sheddable",
           "fairness": {"key": "header:X-Tenant"},
           "rateLimit": {"key": "ip", "perSecond": 5, "burst": 10, "maxKeys": 100}"#,
    )
    .unwrap();
    let admission = config.routes[0].admission();
    assert_eq!(admission.criticality(), Criticality::Sheddable);
    assert_eq!(
        admission.fairness.as_ref().map(|fair| &fair.key),
        Some(&KeySource::Header("x-tenant".into()))
    );
    assert!(admission
        .fairness
        .as_ref()
        .is_some_and(|fair| fair.weights.is_empty()));
    let Some(RateLimit::Local { key, rate }) = &admission.rate_limit else {
        panic!("{admission:?}");
    };
    assert_eq!(
        key.as_ref().map(KeySource::header),
        Some("cf-connecting-ip")
    );
    assert_eq!((rate.count(), rate.burst(), rate.max_keys()), (5, 10, 100));
    assert_eq!(rate.interval(), Duration::from_millis(200));
    assert!(config.criticality_in_use());

    let plain = with_route(r#""prefix": "/p/", "origin": "a""#).unwrap();
    let admission = plain.routes[0].admission();
    assert_eq!(admission.criticality(), Criticality::Default);
    assert_eq!((&admission.fairness, &admission.rate_limit), (&None, &None));
    assert!(!plain.criticality_in_use());
}

#[test]
fn fairness_weights_name_key_values_and_their_weights() {
    let config = with_route(
        r#""prefix": "/p/", "origin": "a",
           "fairness": {"key": "header:x-tenant", "weights": {"acme": 3, "globex": 1000, "eyJ.a b": 2}}"#,
    )
    .unwrap();
    let fairness = config.routes[0].admission().fairness.clone().unwrap();
    let weights = &fairness.weights;
    assert_eq!(weights.len(), 3);
    assert_eq!(
        [
            weights.of("acme"),
            weights.of("globex"),
            weights.of("eyJ.a b")
        ],
        [3, 1000, 2]
    );
    // Unknown keys weigh 1.
    assert_eq!(weights.of("initech"), 1);
    assert_eq!(weights.of("ACME"), 1);

    let errors = with_route(
        r#""prefix": "/p/", "origin": "a",
           "fairness": {"key": "ip", "weights": {"a": 0, "b": 1001, "c": 1.5, "d": "2", " e": 2, "": 2}}"#,
    )
    .unwrap_err();
    assert_eq!(
        errors,
        [
            "routes[0].fairness.weights[\"a\"] must be an integer from 1 to 1000, got 0",
            "routes[0].fairness.weights[\"b\"] must be an integer from 1 to 1000, got 1001",
            "routes[0].fairness.weights[\"c\"] must be an integer from 1 to 1000, got 1.5",
            "routes[0].fairness.weights[\"d\"] must be an integer from 1 to 1000, got a string",
            "routes[0].fairness.weights[\" e\"] can never match: a request's key is its header's value without surrounding spaces, and never blank",
            "routes[0].fairness.weights[\"\"] can never match: a request's key is its header's value without surrounding spaces, and never blank",
        ]
    );
    let errors =
        with_route(r#""prefix": "/p/", "origin": "a", "fairness": {"key": "ip", "weights": [2]}"#)
            .unwrap_err();
    assert_eq!(
        errors,
        ["routes[0].fairness.weights must be an object of key values and their weights, got an array"]
    );
}

#[test]
fn a_rate_limit_binding_has_a_period_and_no_local_rate() {
    let config =
        with_route(r#""path": "/f", "fanout": [{"origin": "a", "path": "/x"}], "rateLimit": {"binding": "LIMITER", "key": "ip"}"#)
            .unwrap();
    assert_eq!(
        config.routes[0].admission().rate_limit,
        Some(RateLimit::Binding {
            binding: "LIMITER".into(),
            key: Some(KeySource::Ip),
            period: Duration::from_secs(60)
        })
    );
    let errors = with_route(r#""prefix": "/p/", "origin": "a", "rateLimit": {"binding": "1x", "perSecond": 3, "periodSeconds": 30}"#)
        .unwrap_err();
    assert_eq!(
        errors,
        [
            "routes[0].rateLimit.binding must be a binding name (A-Z a-z 0-9 _, not starting with a digit), got \"1x\"",
            "routes[0].rateLimit.perSecond is not for a binding (its limit is set in wrangler.toml's [[ratelimits]])",
            "routes[0].rateLimit.periodSeconds must be 10 or 60, got 30",
        ]
    );
}

#[test]
fn bad_route_keys_are_named() {
    let errors = with_route(
        r#""prefix": "/p/", "origin": "a", "criticality": "urgent",
           "fairness": {"key": "cookie:x", "by": 1},
           "rateLimit": {"perSecond": 2, "perMinute": 60}"#,
    )
    .unwrap_err();
    assert_eq!(
        errors,
        [
            "routes[0].criticality: unknown criticality \"urgent\": expected \"critical\", \"default\" or \"sheddable\"",
            "routes[0].fairness.by is not a known key (expected one of: key, weights)",
            "routes[0].fairness.key must be \"ip\" or \"header:<name>\" (a header name), got \"cookie:x\"",
            "routes[0].rateLimit: perSecond and perMinute are both given (choose one)",
        ]
    );
    let errors =
        with_route(r#""prefix": "/p/", "origin": "a", "fairness": {}, "rateLimit": {"burst": 0}"#)
            .unwrap_err();
    assert_eq!(
        errors,
        [
            "routes[0].fairness.key is required (\"ip\" or \"header:<name>\")",
            "routes[0].rateLimit.burst must be a positive integer, got 0",
            "routes[0].rateLimit needs perSecond or perMinute (or a binding)",
        ]
    );
}

#[test]
fn codel_and_reserve_are_read_per_limit() {
    let config = read(
        r#"{"global": {"maxInFlight": 8, "maxQueue": 8, "queueTimeoutMs": 100, "queueDiscipline": "codel"},
            "origins": {"a": {"url": "http://a", "maxQueue": 2, "queueTimeoutMs": 50, "queueDiscipline": "codel",
                              "codelTargetMs": 10, "reserve": {"critical": 0.25}}}}"#,
    )
    .unwrap();
    assert_eq!(config.global.discipline, QueueDiscipline::codel());
    let origin = &config.origins[0].limit;
    assert_eq!(
        origin.discipline,
        QueueDiscipline::Codel {
            target: Duration::from_millis(10)
        }
    );
    assert_eq!(origin.reserve, Some(Reserve::new(0.25, 0.2).unwrap()));
    assert_eq!(config.global.reserve, None);

    let errors = read(
        r#"{"global": {"queueDiscipline": "lifo", "codelTargetMs": 5},
            "origins": {"a": {"url": "http://a", "queueDiscipline": "codel"},
                        "b": {"url": "http://b", "maxQueue": 1, "queueTimeoutMs": 5, "queueDiscipline": "codel"},
                        "c": {"url": "http://c", "codelTargetMs": 5, "reserve": {"critical": 0.6, "default": 0.6}},
                        "d": {"url": "http://d", "reserve": {"critical": "lots", "sheddable": 0}}}}"#,
    )
    .unwrap_err();
    assert_eq!(
        errors,
        [
            "global.queueDiscipline must be \"fifo\" or \"codel\", got \"lifo\"",
            "origins.a.queueDiscipline \"codel\" needs a queue: origins.a.maxQueue must be > 0",
            "origins.b.codelTargetMs (5 ms) must be shorter than origins.b.queueTimeoutMs (5 ms)",
            "origins.c.reserve: critical + default must not exceed 1 (the whole limit), got 0.6 + 0.6",
            "origins.d.reserve.sheddable is not a known key (expected one of: critical, default)",
            "origins.d.reserve.critical must be a number from 0 to 1, got a string",
        ]
    );
}

#[test]
fn a_queue_timeout_needs_a_queue() {
    // As the npm package: a timeout that would never apply is refused,
    // naming the key (a forgotten maxQueue, or a key in the wrong limit).
    let errors = read(
        r#"{"global": {"maxInFlight": 8, "queueTimeoutMs": 100},
            "origins": {"a": {"url": "http://a", "maxQueue": 0, "queueTimeoutMs": 50},
                        "b": {"url": "http://b", "maxQueue": 2, "queueTimeoutMs": 50}}}"#,
    )
    .unwrap_err();
    assert_eq!(
        errors,
        [
            "global.queueTimeoutMs needs a queue: global.maxQueue must be > 0 (without one nothing waits)",
            "origins.a.queueTimeoutMs needs a queue: origins.a.maxQueue must be > 0 (without one nothing waits)",
        ]
    );
}

#[test]
fn max_queue_wait_is_read_per_limit_and_auto_needs_a_queue() {
    let config = read(
        r#"{"global": {"maxInFlight": 8, "maxQueue": 8, "queueTimeoutMs": 100, "maxQueueWait": "auto"},
            "origins": {"a": {"url": "http://a", "maxQueue": 2, "queueTimeoutMs": 50, "queueDiscipline": "codel",
                              "maxQueueWait": "auto"},
                        "b": {"url": "http://b", "maxQueue": 2, "queueTimeoutMs": 50, "maxQueueWait": "timeout"},
                        "c": {"url": "http://c"}}}"#,
    )
    .unwrap();
    assert_eq!(config.global.queue_wait, QueueWait::Auto);
    let waits: Vec<QueueWait> = config.origins.iter().map(|o| o.limit.queue_wait).collect();
    assert_eq!(
        waits,
        [QueueWait::Auto, QueueWait::Timeout, QueueWait::Timeout]
    );
    // What the admission is built with.
    let origin = &config.origins[0].limit;
    let admission = edgeshed::admission::Admission::with_options(
        origin.max_in_flight,
        origin.policy(),
        config.options(origin),
        edgeshed::time::ManualClock::new(),
    )
    .unwrap();
    assert_eq!(admission.queue_wait(), QueueWait::Auto);

    let errors = read(
        r#"{"global": {"maxQueueWait": "auto"},
            "origins": {"a": {"url": "http://a", "maxQueue": 2, "queueTimeoutMs": 50, "maxQueueWait": "fast"},
                        "b": {"url": "http://b", "maxQueueWait": 3}}}"#,
    )
    .unwrap_err();
    assert_eq!(
        errors,
        [
            "global.maxQueueWait \"auto\" needs a queue: global.maxQueue must be > 0",
            "origins.a.maxQueueWait must be \"timeout\" or \"auto\", got \"fast\"",
            "origins.b.maxQueueWait must be a string, got a number",
        ]
    );
}

/// DESIGN's default reserve (critical 0.1, default 0.2) applies to every
/// limit without its own once a route names a criticality; without one, no
/// limit keeps a reserve (a plain gateway's limits stay whole).
#[test]
fn the_default_reserve_applies_once_criticality_is_in_use() {
    let origins = r#""origins": {"a": {"url": "http://a", "maxInFlight": 10},
                                  "b": {"url": "http://b", "maxInFlight": 10, "reserve": {"critical": 0, "default": 0}}}"#;
    let route = |extra: &str| {
        read(&format!(
            r#"{{{origins}, "routes": [{{"prefix": "/p/", "origin": "a"{extra}}}]}}"#
        ))
        .unwrap()
    };
    let sheddable_ceiling = |config: &Config, limit| {
        let options = config.options(limit);
        let admission = edgeshed::admission::Admission::with_options(
            10,
            edgeshed::admission::Policy::Shed,
            options,
            edgeshed::time::ManualClock::new(),
        )
        .unwrap();
        admission.reserve().ceiling(10, Criticality::Sheddable)
    };
    let plain = route("");
    assert_eq!(sheddable_ceiling(&plain, &plain.origins[0].limit), 10);
    assert_eq!(sheddable_ceiling(&plain, &plain.global), 10);
    let classed = route(r#", "criticality": "critical""#);
    assert_eq!(sheddable_ceiling(&classed, &classed.origins[0].limit), 7);
    assert_eq!(sheddable_ceiling(&classed, &classed.global), 7);
    assert_eq!(
        sheddable_ceiling(&classed, &classed.origins[1].limit),
        10,
        "an explicit reserve wins"
    );
}
