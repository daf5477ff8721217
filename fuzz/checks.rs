//! The invariants the fuzz targets check, shared with the regression replay.
//!
//! Included with `#[path]` by the fuzz targets (`fuzz/fuzz_targets/*.rs`,
//! libFuzzer) and by `crates/edgeshed-worker/tests/fuzz_regressions.rs` (plain
//! `cargo test`), so a saved input is replayed through exactly the same
//! checks. Each check
//! returns `Err(description)` when an invariant is violated; a panic in the
//! code under test simply propagates (and is a finding too).

#![allow(dead_code)] // each fuzz target uses only its own check

use edgeshed_worker::config::{Admin, Config, Limit, Route};
use edgeshed_worker::proxy_path::OriginUrl;
/// `config` target: bytes -> `serde_json::Value` ->
/// [`Config::from_deserializer`] (the worker's own deserializer, which it
/// runs over serde-wasm-bindgen).
///
/// Never panics; an error has a non-empty message, and so has each problem
/// it lists; an accepted configuration is internally consistent.
pub fn config(data: &[u8]) -> Result<(), String> {
    let Ok(text) = std::str::from_utf8(data) else {
        return Ok(());
    };
    let Ok(json) = serde_json::from_str::<serde_json::Value>(text) else {
        return Ok(());
    };
    match Config::from_deserializer(&json) {
        Err(error) if error.message().trim().is_empty() => {
            Err(format!("empty error message for {text:?}"))
        }
        Err(error) if error.errors().iter().any(|e| e.trim().is_empty()) => Err(format!(
            "an empty problem in {:?} for {text:?}",
            error.errors()
        )),
        Err(_) => Ok(()),
        Ok(config) => check_config(&config).map_err(|why| format!("{why} (input {text:?})")),
    }
}

fn check_limit(limit: &Limit, at: &str) -> Result<(), String> {
    if limit.max_in_flight == 0 {
        return Err(format!("{at}: maxInFlight 0 accepted"));
    }
    if limit.max_queue > 0 && limit.queue_timeout.is_zero() {
        return Err(format!("{at}: a queue without a timeout (unbounded wait)"));
    }
    Ok(())
}

fn check_config(config: &Config) -> Result<(), String> {
    if config.admin == Admin::Bearer(String::new()) {
        return Err("an empty statsToken accepted (anyone could read /__edgeshed/*)".into());
    }
    check_limit(&config.global, "global")?;
    let origins = config.origins.len();
    for origin in &config.origins {
        if origin.name.is_empty() {
            return Err("an origin with an empty name".into());
        }
        check_limit(&origin.limit, &origin.name)?;
        check_origin_url(&origin.url)?;
        if origin.max_body_bytes == 0 {
            return Err(format!("{}: maxBodyBytes 0", origin.name));
        }
        if let Some(budget) = &origin.budget {
            if budget.max_in_flight == 0 || budget.lease_ttl_ms < 100 || budget.binding.is_empty() {
                return Err(format!("{}: budget {budget:?} accepted", origin.name));
            }
        }
    }
    for (index, route) in config.routes.iter().enumerate() {
        let key = match route {
            Route::FanOut { path, calls, .. } => {
                if !path.starts_with('/') {
                    return Err(format!("routes[{index}]: path {path:?} without leading /"));
                }
                if calls.is_empty() {
                    return Err(format!("routes[{index}]: fan-out without calls"));
                }
                for call in calls {
                    if call.origin >= origins {
                        return Err(format!(
                            "routes[{index}]: fan-out origin index {} of {origins}",
                            call.origin
                        ));
                    }
                    if !call.path.starts_with('/') {
                        return Err(format!("routes[{index}]: call path {:?}", call.path));
                    }
                }
                path
            }
            Route::Proxy { prefix, origin, .. } => {
                if *origin >= origins {
                    return Err(format!(
                        "routes[{index}]: proxy origin index {origin} of {origins}"
                    ));
                }
                if !prefix.starts_with('/') || !prefix.ends_with('/') {
                    return Err(format!("routes[{index}]: prefix {prefix:?}"));
                }
                prefix
            }
        };
        // Every route is reachable by its own path (or prefix), or shadowed
        // by an earlier one; looking it up never panics.
        if config.route(key).is_none() {
            return Err(format!("routes[{index}]: {key:?} matches no route"));
        }
    }
    Ok(())
}

/// Origin bases every `proxy_path` input is also joined onto, so the joiner
/// is exercised even when the fuzzed base does not parse.
pub const FIXED_BASES: [&str; 3] = [
    "http://127.0.0.1:9001",
    "https://origin.example:8443/api/v1",
    "http://[::1]/base",
];

/// `proxy_path` target: bytes -> `base \n rest [\n query]` ->
/// [`OriginUrl::parse`] then [`OriginUrl::join_untrusted`].
///
/// Never panics; a parsed base is canonical; a joined URL stays on the
/// origin, under its base path, and keeps no dot or empty segment.
pub fn proxy_path(data: &[u8]) -> Result<(), String> {
    let Ok(text) = std::str::from_utf8(data) else {
        return Ok(());
    };
    let mut parts = text.splitn(3, '\n');
    let base = parts.next().unwrap_or_default();
    let rest = parts.next().unwrap_or_default();
    let query = parts.next();
    if let Ok(url) = OriginUrl::parse(base) {
        check_origin_url(&url).map_err(|why| format!("{why} (base {base:?})"))?;
        check_join(&url, rest, query)?;
    }
    for fixed in FIXED_BASES {
        let url = OriginUrl::parse(fixed).map_err(|why| format!("fixed base {fixed}: {why}"))?;
        check_join(&url, rest, query)?;
    }
    Ok(())
}

/// The authority of an absolute URL: between `://` and the next `/`.
fn authority(url: &str) -> Option<&str> {
    let (_, after) = url.split_once("://")?;
    Some(after.split('/').next().unwrap_or_default())
}

/// `.` or `..`, percent-encoded dots included.
fn is_dot_segment(segment: &str) -> bool {
    matches!(
        segment.to_ascii_lowercase().as_str(),
        "." | ".." | "%2e" | ".%2e" | "%2e." | "%2e%2e"
    )
}

/// `host[:port]`: a name or IPv4 of `A-Z a-z 0-9 . -`, or a bracketed IPv6
/// literal; the port 1 to 5 digits.
fn is_host_port(authority: &str) -> bool {
    let (host, port) = match authority.strip_prefix('[') {
        Some(inner) => match inner.split_once(']') {
            Some((ipv6, after)) => {
                let ipv6_ok = !ipv6.is_empty()
                    && ipv6
                        .chars()
                        .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.');
                if !ipv6_ok {
                    return false;
                }
                match after.strip_prefix(':') {
                    Some(port) => ("[]", Some(port)),
                    None if after.is_empty() => ("[]", None),
                    None => return false,
                }
            }
            None => return false,
        },
        None => match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    let host_ok = host == "[]"
        || (!host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-'));
    let port_ok =
        port.is_none_or(|p| (1..=5).contains(&p.len()) && p.chars().all(|c| c.is_ascii_digit()));
    host_ok && port_ok
}

fn check_origin_url(url: &OriginUrl) -> Result<(), String> {
    let origin = url.origin();
    let Some(authority) = authority(origin) else {
        return Err(format!("origin {origin:?} has no \"://\""));
    };
    if !(origin.starts_with("http://") || origin.starts_with("https://")) {
        return Err(format!("origin {origin:?} is not http(s)"));
    }
    if !is_host_port(authority) {
        return Err(format!("origin {origin:?} has authority {authority:?}"));
    }
    let base = url.base_path();
    if !base.is_empty() && (!base.starts_with('/') || base.ends_with('/')) {
        return Err(format!(
            "base path {base:?} is not /-led without a trailing /"
        ));
    }
    if base
        .split('/')
        .skip(1)
        .any(|s| s.is_empty() || is_dot_segment(s))
    {
        return Err(format!("base path {base:?} keeps an empty or dot segment"));
    }
    // Canonical: parsing what it prints gives the same URL back.
    let printed = format!("{origin}{base}");
    match OriginUrl::parse(&printed) {
        Ok(again) if &again == url => Ok(()),
        other => Err(format!("{printed:?} re-parses as {other:?}, not {url:?}")),
    }
}

fn check_join(url: &OriginUrl, rest: &str, query: Option<&str>) -> Result<(), String> {
    let Ok(joined) = url.join_untrusted(rest, query) else {
        return Ok(());
    };
    let context = || format!("rest {rest:?}, query {query:?} on {url:?} -> {joined:?}");
    let prefix = format!("{}{}/", url.origin(), url.base_path());
    if !joined.starts_with(&prefix) {
        return Err(format!("does not start with {prefix:?}: {}", context()));
    }
    if authority(&joined) != authority(url.origin()) {
        return Err(format!("authority changed: {}", context()));
    }
    // The path: after the origin, up to the query (or a fragment).
    let path = joined
        .get(url.origin().len()..)
        .unwrap_or_default()
        .split(['?', '#'])
        .next()
        .unwrap_or_default();
    if path.split('/').any(is_dot_segment) {
        return Err(format!("a dot segment survived: {}", context()));
    }
    if path.contains("//") {
        return Err(format!("an empty segment survived: {}", context()));
    }
    Ok(())
}
