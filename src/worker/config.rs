//! The worker's configuration (the `EDGESHED` binding): its model and its
//! validation. Every error names the key that is wrong.

use super::proxy_path::OriginUrl;
use super::value::Value;
use crate::admission::Policy;
use core::fmt;
use core::time::Duration;

/// Requests admitted at once when `global` is omitted; the rest are shed.
pub const DEFAULT_GLOBAL_MAX_IN_FLIGHT: usize = 256;
/// An origin's `maxInFlight` when omitted: the platform's per-invocation
/// connection limit.
pub const DEFAULT_ORIGIN_MAX_IN_FLIGHT: usize = 6;
/// An origin's `timeoutMs` when omitted: 30 s.
pub const DEFAULT_ORIGIN_TIMEOUT: Duration = Duration::from_secs(30);
/// An origin's `maxBodyBytes` when omitted: 8 MiB.
pub const DEFAULT_MAX_BODY_BYTES: u64 = 8 * 1024 * 1024;
/// Largest accepted `maxBodyBytes`: 128 MiB, the isolate's memory.
const MAX_BODY_BYTES: f64 = 128.0 * 1024.0 * 1024.0;
/// Largest accepted count (`maxInFlight`, `maxQueue`).
const MAX_COUNT: f64 = 1_000_000.0;
/// Largest accepted millisecond value (what `setTimeout` accepts).
const MAX_MILLIS: f64 = 2_147_483_647.0;

/// The validated configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// `Retry-After` seconds on 503 answers.
    pub retry_after_seconds: u32,
    /// When set, `/__edgeshed/*` needs `Authorization: Bearer <token>`.
    pub stats_token: Option<String>,
    /// The limit on requests admitted into the worker.
    pub global: Limit,
    /// The origins, in configuration order.
    pub origins: Vec<Origin>,
    /// The routes, matched in order.
    pub routes: Vec<Route>,
}

/// A concurrency limit and what happens beyond it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    /// Most requests holding a permit at once.
    pub max_in_flight: usize,
    /// Most requests waiting (0: shed at once).
    pub max_queue: usize,
    /// Longest wait in the queue.
    pub queue_timeout: Duration,
}

impl Limit {
    /// The admission policy for this limit.
    pub fn policy(&self) -> Policy {
        if self.max_queue == 0 {
            Policy::Shed
        } else {
            Policy::Queue {
                max_queue: self.max_queue,
                timeout: self.queue_timeout,
            }
        }
    }
}

/// An origin the worker calls.
#[derive(Clone, Debug, PartialEq)]
pub struct Origin {
    /// Its name (the key in `origins`).
    pub name: String,
    /// Its base URL.
    pub url: OriginUrl,
    /// Its limit, shared by all requests of the isolate.
    pub limit: Limit,
    /// Its own time limit per call (until response headers). Defaults to
    /// [`DEFAULT_ORIGIN_TIMEOUT`], so that a hung origin cannot hold a permit
    /// for ever.
    pub timeout: Option<Duration>,
    /// The largest fan-out response body read into memory; larger ones fail
    /// with 502 instead of exhausting the isolate's memory.
    pub max_body_bytes: u64,
}

/// A route, matched against the request path.
#[derive(Clone, Debug, PartialEq)]
pub enum Route {
    /// Calls several origins concurrently and merges their JSON.
    FanOut {
        /// The exact request path.
        path: String,
        /// One budget from request entry, if any.
        deadline: Option<Duration>,
        /// The calls to make.
        calls: Vec<FanOutCall>,
    },
    /// Streams the rest of the path to one origin.
    Proxy {
        /// The path prefix, ending in `/`.
        prefix: String,
        /// Index into [`Config::origins`].
        origin: usize,
    },
}

/// One call of a fan-out route.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FanOutCall {
    /// Index into [`Config::origins`].
    pub origin: usize,
    /// The path joined to the origin's URL.
    pub path: String,
    /// Whether the route fails without this answer.
    pub required: bool,
}

/// What is wrong with a configuration, naming the key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(String);

impl ConfigError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

type Result<T> = core::result::Result<T, ConfigError>;

fn error<T>(message: String) -> Result<T> {
    Err(ConfigError(message))
}

/// The entries of an object at `path`, refusing keys outside `known`.
fn object<'v>(value: &'v Value, path: &str, known: &[&str]) -> Result<&'v [(String, Value)]> {
    let Value::Object(entries) = value else {
        return error(format!("{path} must be an object, got {}", value.kind()));
    };
    for (key, _) in entries {
        if !known.contains(&key.as_str()) {
            let at = join(path, key);
            return error(format!(
                "{at} is not a known key (expected one of: {})",
                known.join(", ")
            ));
        }
    }
    Ok(entries)
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn field<'v>(entries: &'v [(String, Value)], key: &str) -> Option<&'v Value> {
    entries
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
        .filter(|v| !matches!(v, Value::Null))
}

/// An optional integer in `[min, max]` at `path`.
fn integer(
    value: Option<&Value>,
    path: &str,
    min: f64,
    max: f64,
    what: &str,
) -> Result<Option<f64>> {
    let Some(value) = value else {
        return Ok(None);
    };
    match value {
        Value::Number(n) if n.is_finite() && n.fract() == 0.0 && *n >= min && *n <= max => {
            Ok(Some(*n))
        }
        Value::Number(n) => error(format!(
            "{path} must be {what}, got {}",
            describe_number(*n)
        )),
        other => error(format!("{path} must be {what}, got {}", other.kind())),
    }
}

/// A number for an error message, without float formatting (which would
/// pull tens of KiB of code into the worker's wasm): integers exactly, other
/// values to three decimals.
fn describe_number(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n.is_infinite() {
        return if n > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    if n.fract() == 0.0 && n.abs() < 1e15 {
        return format!("{}", n as i64);
    }
    if n.abs() >= 1e15 {
        return "a number too large".into();
    }
    let thousandths = (n.abs() * 1000.0).round() as u64;
    let sign = if n < 0.0 { "-" } else { "" };
    format!("{sign}{}.{:03}", thousandths / 1000, thousandths % 1000)
}

fn string<'v>(value: Option<&'v Value>, path: &str) -> Result<Option<&'v str>> {
    match value {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => error(format!("{path} must be a string, got {}", other.kind())),
    }
}

fn millis(value: Option<&Value>, path: &str) -> Result<Option<Duration>> {
    Ok(integer(
        value,
        path,
        1.0,
        MAX_MILLIS,
        "a positive integer (milliseconds)",
    )?
    .map(|ms| Duration::from_millis(ms as u64)))
}

fn limit(entries: &[(String, Value)], path: &str, default_max_in_flight: usize) -> Result<Limit> {
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

fn origin(name: &str, value: &Value) -> Result<Origin> {
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
        .ok_or_else(|| ConfigError(format!("{url_path} is required")))?;
    let url = OriginUrl::parse(url).map_err(|why| ConfigError(format!("{url_path} {why}")))?;
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
    let name = string(value, path)?.ok_or_else(|| ConfigError(format!("{path} is required")))?;
    origins
        .iter()
        .position(|origin| origin.name == name)
        .ok_or_else(|| ConfigError(format!("{path} names an unknown origin \"{name}\"")))
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

fn route(index: usize, value: &Value, origins: &[Origin]) -> Result<Route> {
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
        .ok_or_else(|| ConfigError(format!("{} is required", join(path, "path"))))?;
    let required = match field(entries, "required") {
        None => true,
        Some(Value::Bool(required)) => *required,
        Some(other) => {
            return error(format!(
                "{} must be a boolean, got {}",
                join(path, "required"),
                other.kind()
            ))
        }
    };
    Ok(FanOutCall {
        origin,
        path: call_path,
        required,
    })
}

impl Config {
    /// Validates a configuration value.
    pub fn from_value(value: &Value) -> Result<Config> {
        let entries = object(
            value,
            "EDGESHED",
            &[
                "retryAfterSeconds",
                "statsToken",
                "global",
                "origins",
                "routes",
            ],
        )?;
        let retry_after_seconds = integer(
            field(entries, "retryAfterSeconds"),
            "retryAfterSeconds",
            0.0,
            86_400.0,
            "an integer from 0 to 86400",
        )?
        .map_or(1, |n| n as u32);
        let stats_token = string(field(entries, "statsToken"), "statsToken")?.map(str::to_string);
        if stats_token.as_deref() == Some("") {
            return error("statsToken must not be empty (omit it to leave stats open)".into());
        }
        let global = match field(entries, "global") {
            None => Limit {
                max_in_flight: DEFAULT_GLOBAL_MAX_IN_FLIGHT,
                max_queue: 0,
                queue_timeout: Duration::ZERO,
            },
            Some(value) => {
                let global = object(
                    value,
                    "global",
                    &["maxInFlight", "maxQueue", "queueTimeoutMs"],
                )?;
                limit(global, "global", DEFAULT_GLOBAL_MAX_IN_FLIGHT)?
            }
        };
        let origins = match field(entries, "origins") {
            None => Vec::new(),
            Some(value) => {
                let Value::Object(items) = value else {
                    return error(format!("origins must be an object, got {}", value.kind()));
                };
                items
                    .iter()
                    .map(|(name, value)| origin(name, value))
                    .collect::<Result<Vec<_>>>()?
            }
        };
        let routes = match field(entries, "routes") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| route(i, item, &origins))
                .collect::<Result<Vec<_>>>()?,
            Some(other) => return error(format!("routes must be an array, got {}", other.kind())),
        };
        Ok(Config {
            retry_after_seconds,
            stats_token,
            global,
            origins,
            routes,
        })
    }

    /// The longest any request can legitimately take: the global queue wait,
    /// then the slowest origin's queue wait plus its time limit, plus 5 s of
    /// slack. (Deadlines only shorten it; proxied bodies stream in
    /// JavaScript after the request's task has finished.)
    pub fn max_request_time(&self) -> Duration {
        let slowest_origin = self
            .origins
            .iter()
            .map(|origin| {
                origin.limit.queue_timeout + origin.timeout.unwrap_or(DEFAULT_ORIGIN_TIMEOUT)
            })
            .max()
            .unwrap_or_default();
        self.global.queue_timeout + slowest_origin + Duration::from_secs(5)
    }

    /// The route for a request path: fan-out routes match exactly, proxy
    /// routes by prefix; the first match in configuration order wins.
    pub fn route(&self, path: &str) -> Option<&Route> {
        self.routes.iter().find(|route| match route {
            Route::FanOut { path: exact, .. } => exact == path,
            Route::Proxy { prefix, .. } => path.starts_with(prefix.as_str()),
        })
    }
}
