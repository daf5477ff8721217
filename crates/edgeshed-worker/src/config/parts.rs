//! The parts of a configuration: limits, origins and routes.

use super::read::{
    boolean, error, field, integer, join, millis, object, string, Result, MAX_COUNT,
};
use super::{ConfigError, FanOutCall, Limit, Origin, Route};
use super::{DEFAULT_MAX_BODY_BYTES, DEFAULT_ORIGIN_MAX_IN_FLIGHT, DEFAULT_ORIGIN_TIMEOUT};
use crate::proxy_path::OriginUrl;
use crate::value::Value;

/// Largest accepted `maxBodyBytes`: 128 MiB, the isolate's memory.
const MAX_BODY_BYTES: f64 = 128.0 * 1024.0 * 1024.0;

/// A limit (`maxInFlight`, `maxQueue`, `queueTimeoutMs`) at `path`.
pub(super) fn limit(
    entries: &[(String, Value)],
    path: &str,
    default_max_in_flight: usize,
) -> Result<Limit> {
    let max_in_flight = integer(
        field(entries, "maxInFlight"),
        &join(path, "maxInFlight"),
        1.0,
        MAX_COUNT,
        "a positive integer",
    )?
    .map_or(default_max_in_flight, |n| n as usize);
    let max_queue = integer(
        field(entries, "maxQueue"),
        &join(path, "maxQueue"),
        0.0,
        MAX_COUNT,
        "a non-negative integer",
    )?
    .map_or(0, |n| n as usize);
    let queue_timeout = millis(
        field(entries, "queueTimeoutMs"),
        &join(path, "queueTimeoutMs"),
    )?;
    let queue_timeout = match (max_queue, queue_timeout) {
        (0, timeout) => timeout.unwrap_or_default(),
        (_, Some(timeout)) => timeout,
        (_, None) => {
            return error(format!(
                "{} is required when {} > 0 (every wait must be bounded)",
                join(path, "queueTimeoutMs"),
                join(path, "maxQueue")
            ))
        }
    };
    Ok(Limit {
        max_in_flight,
        max_queue,
        queue_timeout,
    })
}

/// The origin `name`.
pub(super) fn origin(name: &str, value: &Value) -> Result<Origin> {
    let name_is_plain = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !name_is_plain {
        return error(format!(
            "origins.\"{name}\" is not a valid origin name (1 to 64 of A-Z a-z 0-9 - _)"
        ));
    }
    let path = format!("origins.{name}");
    let entries = object(
        value,
        &path,
        &[
            "url",
            "maxInFlight",
            "maxQueue",
            "queueTimeoutMs",
            "timeoutMs",
            "maxBodyBytes",
        ],
    )?;
    let url_path = join(&path, "url");
    let url = string(field(entries, "url"), &url_path)?
        .ok_or_else(|| ConfigError::new(format!("{url_path} is required")))?;
    let url = OriginUrl::parse(url).map_err(|why| ConfigError::new(format!("{url_path} {why}")))?;
    Ok(Origin {
        name: name.to_string(),
        url,
        limit: limit(entries, &path, DEFAULT_ORIGIN_MAX_IN_FLIGHT)?,
        timeout: millis(field(entries, "timeoutMs"), &join(&path, "timeoutMs"))?
            .or(Some(DEFAULT_ORIGIN_TIMEOUT)),
        max_body_bytes: integer(
            field(entries, "maxBodyBytes"),
            &join(&path, "maxBodyBytes"),
            1.0,
            MAX_BODY_BYTES,
            "a positive integer (bytes)",
        )?
        .map_or(DEFAULT_MAX_BODY_BYTES, |n| n as u64),
    })
}

fn origin_index(origins: &[Origin], value: Option<&Value>, path: &str) -> Result<usize> {
    let name =
        string(value, path)?.ok_or_else(|| ConfigError::new(format!("{path} is required")))?;
    origins
        .iter()
        .position(|origin| origin.name == name)
        .ok_or_else(|| ConfigError::new(format!("{path} names an unknown origin \"{name}\"")))
}

fn request_path(value: Option<&Value>, path: &str) -> Result<Option<String>> {
    let Some(text) = string(value, path)? else {
        return Ok(None);
    };
    if !text.starts_with('/') {
        return error(format!("{path} must start with \"/\", got \"{text}\""));
    }
    if text
        .chars()
        .any(|c| c.is_control() || c == ' ' || c == '#' || c == '\\')
    {
        return error(format!("{path} must be a plain URL path, got \"{text}\""));
    }
    Ok(Some(text.to_string()))
}

/// The route at `routes[index]`.
pub(super) fn route(index: usize, value: &Value, origins: &[Origin]) -> Result<Route> {
    let path = format!("routes[{index}]");
    let entries = object(
        value,
        &path,
        &["path", "deadlineMs", "fanout", "prefix", "origin"],
    )?;
    let exact = request_path(field(entries, "path"), &join(&path, "path"))?;
    let prefix = request_path(field(entries, "prefix"), &join(&path, "prefix"))?;
    match (exact, prefix) {
        (Some(_), Some(_)) => error(format!(
            "{path} must have either \"path\" or \"prefix\", not both"
        )),
        (None, None) => error(format!(
            "{path} needs \"path\" (a fan-out route) or \"prefix\" (a proxy route)"
        )),
        (Some(exact), None) => {
            for key in ["origin"] {
                if field(entries, key).is_some() {
                    return error(format!("{} is only for prefix routes", join(&path, key)));
                }
            }
            let fanout_path = join(&path, "fanout");
            let Some(Value::Array(items)) = field(entries, "fanout") else {
                return match field(entries, "fanout") {
                    None => error(format!("{fanout_path} is required for a fan-out route")),
                    Some(other) => error(format!(
                        "{fanout_path} must be an array, got {}",
                        other.kind()
                    )),
                };
            };
            if items.is_empty() {
                return error(format!("{fanout_path} must name at least one origin call"));
            }
            let calls = items
                .iter()
                .enumerate()
                .map(|(i, item)| fanout_call(&format!("{fanout_path}[{i}]"), item, origins))
                .collect::<Result<Vec<_>>>()?;
            Ok(Route::FanOut {
                path: exact,
                deadline: millis(field(entries, "deadlineMs"), &join(&path, "deadlineMs"))?,
                calls,
            })
        }
        (None, Some(prefix)) => {
            for key in ["fanout", "deadlineMs"] {
                if field(entries, key).is_some() {
                    return error(format!("{} is only for fan-out routes", join(&path, key)));
                }
            }
            if !prefix.ends_with('/') {
                return error(format!(
                    "{} must end with \"/\", got \"{prefix}\"",
                    join(&path, "prefix")
                ));
            }
            let origin = origin_index(origins, field(entries, "origin"), &join(&path, "origin"))?;
            Ok(Route::Proxy { prefix, origin })
        }
    }
}

fn fanout_call(path: &str, value: &Value, origins: &[Origin]) -> Result<FanOutCall> {
    let entries = object(value, path, &["origin", "path", "required"])?;
    let origin = origin_index(origins, field(entries, "origin"), &join(path, "origin"))?;
    let call_path = request_path(field(entries, "path"), &join(path, "path"))?
        .ok_or_else(|| ConfigError::new(format!("{} is required", join(path, "path"))))?;
    let required = boolean(field(entries, "required"), &join(path, "required"))?.unwrap_or(true);
    Ok(FanOutCall {
        origin,
        path: call_path,
        required,
    })
}
