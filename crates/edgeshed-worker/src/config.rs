//! The worker's configuration (the `EDGESHED` binding): its model, read
//! with serde (`raw.rs`, through the lenient pieces of `de.rs`) and then
//! checked (`check.rs`, `routes.rs`). Every error names the key that is
//! wrong, and every error of a configuration is reported at once.
//!
//! One deserializer for every caller: the worker reads the binding with
//! serde-wasm-bindgen, tests and the fuzz target with `serde_json::Value`.

mod adaptive;
mod budget;
mod check;
mod classes;
mod de;
mod error;
mod fairness;
mod key_source;
mod queueing;
mod ranges;
mod raw;
mod report;
mod routes;
#[cfg(test)]
mod schema_tests;
mod warnings;

pub use adaptive::Adaptive;
pub use budget::{DEFAULT_BUDGET_BINDING, DEFAULT_LEASE_TTL_MS};
pub use classes::{RateLimit, RouteAdmission};
pub use error::ConfigError;
pub use fairness::{Fairness, Weights};
pub use key_source::KeySource;
pub use warnings::{lease_warning, BindingKind, NamedBinding, Warning};

use super::proxy_path::OriginUrl;
use crate::budget::Unavailable;
use core::time::Duration;
use edgeshed::admission::{Options, Policy, QueueDiscipline, QueueWait, Reserve};
use serde::{Deserialize, Deserializer};

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
    /// `queueDiscipline` (and `codelTargetMs`): FIFO unless `"codel"`.
    pub discipline: QueueDiscipline,
    /// `maxQueueWait`: up to the queue timeout unless `"auto"`.
    pub queue_wait: QueueWait,
    /// `reserve`, if given; see [`Config::options`] for what applies without it.
    pub reserve: Option<Reserve>,
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

impl Limit {
    /// A limit of `max_in_flight` that sheds at once: no queue, FIFO, no reserve.
    pub const fn shedding(max_in_flight: usize) -> Self {
        Self {
            max_in_flight,
            max_queue: 0,
            queue_timeout: Duration::ZERO,
            discipline: QueueDiscipline::Fifo,
            queue_wait: QueueWait::Timeout,
            reserve: None,
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
    /// Its limit, shared by all requests of the isolate. With
    /// [`adaptive`](Self::adaptive), `max_in_flight` is where it starts.
    pub limit: Limit,
    /// `adaptive`: the algorithm that moves the limit (`None`: fixed).
    pub adaptive: Option<Adaptive>,
    /// Its own time limit per call (until response headers). Defaults to
    /// [`DEFAULT_ORIGIN_TIMEOUT`], so that a hung origin cannot hold a permit
    /// for ever.
    pub timeout: Option<Duration>,
    /// The largest fan-out response body read into memory; larger ones fail
    /// with 502 instead of exhausting the isolate's memory.
    pub max_body_bytes: u64,
    /// Its fleet budget (`budget`), if any: a limit shared by every isolate.
    pub budget: Option<Budget>,
}

/// `origins.<name>.budget`: at most `max_in_flight` calls to the origin
/// across every isolate that shares the Durable Object namespace `binding`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Budget {
    /// The `env` binding of the `EdgeshedBudget` namespace (default
    /// [`DEFAULT_BUDGET_BINDING`]).
    pub binding: String,
    /// The fleet-wide limit; with [`adaptive`](Self::adaptive), where the
    /// adaptive limit starts.
    pub max_in_flight: u32,
    /// `adaptive`: the algorithm the object runs over the holders' samples
    /// to move the fleet limit (`None`: fixed).
    pub adaptive: Option<Adaptive>,
    /// How long a lease lasts unless renewed (default
    /// [`DEFAULT_LEASE_TTL_MS`]); should exceed the origin's `timeoutMs`.
    pub lease_ttl_ms: u64,
    /// What to admit while the object cannot be reached.
    pub unavailable: Unavailable,
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
        /// Its criticality, fairness key and rate limit.
        admission: RouteAdmission,
    },
    /// Streams the rest of the path to one origin.
    Proxy {
        /// The path prefix, ending in `/`.
        prefix: String,
        /// Index into [`Config::origins`].
        origin: usize,
        /// Its criticality, fairness key and rate limit.
        admission: RouteAdmission,
    },
}

impl Route {
    /// Its criticality, fairness key and rate limit.
    pub fn admission(&self) -> &RouteAdmission {
        match self {
            Route::FanOut { admission, .. } | Route::Proxy { admission, .. } => admission,
        }
    }

    /// Its `path` (fan-out) or `prefix` (proxy): what a 429's `route:` scope names.
    pub fn key(&self) -> &str {
        match self {
            Route::FanOut { path, .. } => path,
            Route::Proxy { prefix, .. } => prefix,
        }
    }
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

impl Config {
    /// Reads and checks a configuration from `deserializer`: a
    /// `serde_wasm_bindgen::Deserializer` over the binding in the worker, a
    /// `&serde_json::Value` in tests and fuzzing. The deserializer must hand
    /// out self-contained values (as those two do; not a streaming parser),
    /// because a part that cannot be read is skipped and the rest still
    /// read, so that every error is reported at once.
    pub fn from_deserializer<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Config, ConfigError> {
        let raw = de::Section::<raw::RawConfig>::deserialize(deserializer)
            .map_err(|error| ConfigError::new(format!("EDGESHED could not be read ({error})")))?;
        check::config(&raw)
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

    /// Whether any route names a `criticality`: then every limit without a
    /// `reserve` of its own keeps the contract's default reserve (critical
    /// 0.1, default 0.2), so that criticality decides who is shed first.
    pub fn criticality_in_use(&self) -> bool {
        self.routes
            .iter()
            .any(|route| route.admission().criticality.is_some())
    }

    /// The admission options of `limit` (global or an origin's): its queue
    /// discipline, its queue wait and its reserve — its own `reserve`, else the default one
    /// when [criticality is in use](Self::criticality_in_use), else none.
    pub fn options(&self, limit: &Limit) -> Options {
        let reserve = limit.reserve.unwrap_or(if self.criticality_in_use() {
            Reserve::default()
        } else {
            Reserve::NONE
        });
        Options::new()
            .reserve(reserve)
            .discipline(limit.discipline)
            .queue_wait(limit.queue_wait)
    }

    /// The route for a request path: fan-out routes match exactly, proxy
    /// routes by prefix; the first match in configuration order wins.
    pub fn route(&self, path: &str) -> Option<&Route> {
        self.route_at(path).map(|(_, route)| route)
    }

    /// [`route`](Self::route), with its index in [`routes`](Self::routes).
    pub fn route_at(&self, path: &str) -> Option<(usize, &Route)> {
        self.routes
            .iter()
            .enumerate()
            .find(|(_, route)| match route {
                Route::FanOut { path: exact, .. } => exact == path,
                Route::Proxy { prefix, .. } => path.starts_with(prefix.as_str()),
            })
    }
}
