//! Why a request failed, and the one table that turns a failure into the
//! gateway's answer (the design contract, "Worker HTTP behaviour"). Pure: no JS, so
//! it is tested natively (`tests/status_table.rs`), and every route kind
//! (fan-out, prefix) answers through [`Failure::answer`].
//!
//! ```
//! use edgeshed_worker::failure::{Failure, Refusal, Scope};
//!
//! let answer = Failure::Overloaded(Refusal::Limit).answer(Scope::Global);
//! assert_eq!(answer.status, 503);
//! assert!(answer.retry_after);
//! assert_eq!(answer.body, r#"{"error":"overloaded","scope":"global","reason":"limit"}"#);
//!
//! let answer = Failure::Deadline.answer(Scope::Origin("users"));
//! assert_eq!((answer.status, answer.body.as_str()), (504, r#"{"error":"deadline"}"#));
//!
//! // A key over its rate: 429, scoped to the route, with Retry-After.
//! use edgeshed::error::RateLimited;
//! use std::time::Duration;
//! let failure = Failure::RateLimited(RateLimited::rate(Duration::from_millis(1500)));
//! let answer = failure.answer(failure.scope_in(Scope::Origin("users"), "/api/"));
//! assert_eq!(answer.status, 429);
//! assert_eq!(answer.body, r#"{"error":"rate_limited","scope":"route:/api/","reason":"rate"}"#);
//! assert_eq!(failure.retry_after_seconds(1), 2);
//! ```

use edgeshed::admission::AdmitError;
use edgeshed::error::{OverloadCause, RateLimited};

/// The `reason` of a 503: `limit`, `queue_timeout`, `budget` and
/// `displaced` (a queued request pushed out of a full queue by a more
/// critical one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The scope's limit was reached and its queue full (or disabled).
    Limit,
    /// The request waited in the scope's queue until `queueTimeoutMs`.
    QueueTimeout,
    /// The fleet budget had no permit for it while it could wait.
    Budget,
    /// It waited in a full queue until a more critical request took its place.
    Displaced,
}

impl Refusal {
    /// The `reason` string of the 503 body.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Limit => "limit",
            Self::QueueTimeout => "queue_timeout",
            Self::Budget => "budget",
            Self::Displaced => "displaced",
        }
    }

    /// The refusal a local limiter's admission error stands for (a cause
    /// the core adds later counts as the limit until it is mapped here).
    pub fn of(error: &AdmitError) -> Self {
        match error.overloaded().map(|overloaded| overloaded.cause()) {
            Some(OverloadCause::QueueTimeout) => Self::QueueTimeout,
            Some(OverloadCause::Displaced) => Self::Displaced,
            Some(OverloadCause::Budget) => Self::Budget,
            _ => Self::Limit,
        }
    }
}

/// Why a request (or one of its origin calls) failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// A limiter or a fleet budget refused it (503), and why.
    Overloaded(Refusal),
    /// Its key was over its fair share of a limit, or over the route's rate
    /// limit (429, scoped to the route).
    RateLimited(RateLimited),
    /// The request's deadline passed first.
    Deadline,
    /// The origin's own `timeoutMs` passed first.
    Timeout,
    /// Unreachable, reset, or not a valid response.
    Unreachable,
    /// Answered with a non-2xx status (fan-out), or (prefix route) one it
    /// cannot relay ([`relayable_status`]).
    Status(u16),
    /// Answered with a body larger than the origin's `maxBodyBytes`.
    TooLarge,
}

impl Failure {
    /// The failure an admission error of a local limiter stands for: a
    /// passed deadline, a key over its fair share (429), or an overload
    /// (503, with its reason).
    pub fn of_admission(error: &AdmitError) -> Self {
        if error.is_expired() {
            return Self::Deadline;
        }
        match error.rate_limited() {
            Some(limited) => Self::RateLimited(limited),
            None => Self::Overloaded(Refusal::of(error)),
        }
    }
}

/// Whether a prefix route can relay an origin's `status` as its own: a
/// final status a `Response` can be made with (200–599). 101 Switching
/// Protocols is final only for an upgrade, which a prefix route does not
/// relay; any other status below 200 or above 599 is not HTTP's. Such an
/// answer is a [`Failure::Status`] (502 with the status).
///
/// ```
/// use edgeshed_worker::failure::relayable_status;
/// assert!(relayable_status(200) && relayable_status(304) && relayable_status(599));
/// assert!(!relayable_status(101) && !relayable_status(600) && !relayable_status(999));
/// ```
pub fn relayable_status(status: u16) -> bool {
    (200..=599).contains(&status)
}

/// Where a failure happened: the global limit, one origin (by name), or a
/// route (its `path` or `prefix`: where a 429 is scoped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope<'a> {
    /// The worker's global admission.
    Global,
    /// The named origin: its limit, its budget or its call.
    Origin(&'a str),
    /// The route of this path or prefix: its rate limit, or its key's fair share.
    Route(&'a str),
}

impl Scope<'_> {
    /// `global`, `origin:<name>` or `route:<path or prefix>`.
    fn name(self) -> String {
        match self {
            Scope::Global => "global".to_string(),
            Scope::Origin(name) => format!("origin:{name}"),
            Scope::Route(key) => format!("route:{key}"),
        }
    }
}

/// The answer to a failure: status, JSON body, and whether it carries
/// `Retry-After` (503s and 429s do).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The JSON body.
    pub body: String,
    /// Whether the answer carries `Retry-After: <retryAfterSeconds>`.
    pub retry_after: bool,
}

impl Failure {
    /// The scope a failure met in `scope` is answered in: a 429 (a key over
    /// its rate or its fair share of any limit) is scoped to the request's
    /// `route`; every other failure to where it happened.
    pub fn scope_in<'a>(self, scope: Scope<'a>, route: &'a str) -> Scope<'a> {
        match self {
            Self::RateLimited(_) => Scope::Route(route),
            _ => scope,
        }
    }

    /// The `Retry-After` seconds of the answer: a rate limit's earliest
    /// allowed time, rounded up (at least 1); otherwise `configured` (the
    /// `retryAfterSeconds` key).
    pub fn retry_after_seconds(self, configured: u32) -> u32 {
        let Self::RateLimited(limited) = self else {
            return configured;
        };
        match limited.retry_after() {
            Some(wait) => {
                let millis = u32::try_from(wait.as_millis()).unwrap_or(u32::MAX);
                millis.div_ceil(1000).max(1)
            }
            None => configured,
        }
    }

    /// The gateway's answer to this failure in `scope`. Failures that only
    /// an origin call has (`Timeout`, `Unreachable`, `Status`, `TooLarge`)
    /// name the origin; in another scope (never the case) the name is
    /// empty.
    pub fn answer(self, scope: Scope<'_>) -> Answer {
        let origin = match scope {
            Scope::Global | Scope::Route(_) => "",
            Scope::Origin(name) => name,
        };
        let (status, body) = match self {
            Self::Overloaded(refusal) => {
                let scope = scope.name();
                let fields = [("scope", scope.as_str()), ("reason", refusal.as_str())];
                (503, error_json("overloaded", &fields))
            }
            Self::RateLimited(limited) => {
                let scope = scope.name();
                let reason = limited.reason().as_str();
                let fields = [("scope", scope.as_str()), ("reason", reason)];
                (429, error_json("rate_limited", &fields))
            }
            Self::Deadline => (504, error_json("deadline", &[])),
            Self::Timeout => (504, error_json("timeout", &[("origin", origin)])),
            Self::Unreachable => (502, error_json("bad_gateway", &[("origin", origin)])),
            Self::TooLarge => (
                502,
                error_json(
                    "bad_gateway",
                    &[("origin", origin), ("reason", "body_too_large")],
                ),
            ),
            Self::Status(status) => (
                502,
                format!(
                    "{{\"error\":\"bad_gateway\",\"origin\":{},\"status\":{status}}}",
                    json_string(origin)
                ),
            ),
        };
        Answer {
            status,
            body,
            retry_after: status == 503 || status == 429,
        }
    }
}

/// `{"error":"<kind>", "<key>": "<value>"...}` with JSON-escaped strings.
///
/// ```
/// use edgeshed_worker::failure::error_json;
/// assert_eq!(error_json("not_found", &[]), r#"{"error":"not_found"}"#);
/// ```
pub fn error_json(kind: &str, fields: &[(&str, &str)]) -> String {
    let mut body = format!("{{\"error\":{}", json_string(kind));
    for (key, value) in fields {
        body.push_str(&format!(",{}:{}", json_string(key), json_string(value)));
    }
    body.push('}');
    body
}

/// A JSON string literal for `text` (in Rust: `JSON.stringify` cost a
/// crossing and two string copies per call, 3 % of the shed path's CPU).
pub fn json_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into())
}
