//! The worker's configuration (the `EDGESHED` binding): its model and its
//! validation. Every error names the key that is wrong.

mod parts;
mod read;

use super::proxy_path::OriginUrl;
use super::value::Value;
use core::fmt;
use core::time::Duration;
use edgeshed::admission::Policy;
use parts::{limit, origin, route};
use read::{boolean, error, field, integer, object, string, Result};

/// Requests admitted at once when `global` is omitted; the rest are shed.
pub const DEFAULT_GLOBAL_MAX_IN_FLIGHT: usize = 256;
/// An origin's `maxInFlight` when omitted: the platform's per-invocation
/// connection limit.
pub const DEFAULT_ORIGIN_MAX_IN_FLIGHT: usize = 6;
/// An origin's `timeoutMs` when omitted: 30 s.
pub const DEFAULT_ORIGIN_TIMEOUT: Duration = Duration::from_secs(30);
/// An origin's `maxBodyBytes` when omitted: 8 MiB.
pub const DEFAULT_MAX_BODY_BYTES: u64 = 8 * 1024 * 1024;

/// The validated configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// `Retry-After` seconds on 503 answers.
    pub retry_after_seconds: u32,
    /// Who may read `/__edgeshed/*` (`statsToken`, `statsPublic`).
    pub admin: Admin,
    /// The limit on requests admitted into the worker.
    pub global: Limit,
    /// The origins, in configuration order.
    pub origins: Vec<Origin>,
    /// The routes, matched in order.
    pub routes: Vec<Route>,
}

/// Access to the admin endpoints (`/__edgeshed/*`): closed unless opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Admin {
    /// Neither `statsToken` nor `"statsPublic": true`: every `/__edgeshed/*`
    /// path answers 404, like an unknown path.
    Closed,
    /// `"statsPublic": true`: open to anyone who can reach the gateway.
    Public,
    /// `statsToken`: only with `Authorization: Bearer <token>`; 401 otherwise.
    Bearer(String),
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

    /// The error of a missing or unreadable `EDGESHED` binding: the gateway
    /// fails closed (every request answers 500) instead of guessing a
    /// configuration. `why` says what was found.
    pub fn missing_binding(why: &str) -> Self {
        Self(format!(
            "the EDGESHED binding is missing: {why}; set it in wrangler.toml \
             ([vars.EDGESHED], a JSON object, or a JSON string) -- see the README"
        ))
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

impl Config {
    /// Validates a configuration value.
    pub fn from_value(value: &Value) -> Result<Config> {
        let entries = object(
            value,
            "EDGESHED",
            &[
                "retryAfterSeconds",
                "statsToken",
                "statsPublic",
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
        let admin = admin(entries)?;
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
            admin,
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

/// `statsToken` and `statsPublic`: who may read `/__edgeshed/*`.
fn admin(entries: &[(String, Value)]) -> Result<Admin> {
    let token = string(field(entries, "statsToken"), "statsToken")?;
    let public = boolean(field(entries, "statsPublic"), "statsPublic")?.unwrap_or(false);
    match (token, public) {
        (Some(""), _) => error(
            "statsToken must not be empty (omit it to keep /__edgeshed/* closed, \
             or set \"statsPublic\": true to open it)"
                .into(),
        ),
        (Some(_), true) => error(
            "statsPublic must not be true when statsToken is set (choose one: \
             a token, or public access)"
                .into(),
        ),
        (Some(token), false) => Ok(Admin::Bearer(token.to_string())),
        (None, true) => Ok(Admin::Public),
        (None, false) => Ok(Admin::Closed),
    }
}
