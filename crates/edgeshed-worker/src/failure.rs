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
//! ```

use edgeshed::admission::AdmitError;
use edgeshed::error::OverloadCause;

/// The `reason` of a 503. The design contract lists `limit`, `queue_timeout`,
/// `budget` and `displaced` (a queued request pushed out by a more critical
/// one, with criticality); a variant is added here with its cause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The scope's limit was reached and its queue full (or disabled).
    Limit,
    /// The request waited in the scope's queue until `queueTimeoutMs`.
    QueueTimeout,
    /// The fleet budget had no permit for it while it could wait.
    Budget,
}

impl Refusal {
    /// The `reason` string of the 503 body.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Limit => "limit",
            Self::QueueTimeout => "queue_timeout",
            Self::Budget => "budget",
        }
    }

    /// The refusal a local limiter's admission error stands for (a cause
    /// the core adds later counts as the limit until it is mapped here).
    pub fn of(error: &AdmitError) -> Self {
        match error.overloaded().map(|overloaded| overloaded.cause()) {
            Some(OverloadCause::QueueTimeout) => Self::QueueTimeout,
            _ => Self::Limit,
        }
    }
}

/// Why a request (or one of its origin calls) failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// A limiter or a fleet budget refused it (503), and why.
    Overloaded(Refusal),
    /// The request's deadline passed first.
    Deadline,
    /// The origin's own `timeoutMs` passed first.
    Timeout,
    /// Unreachable, reset, or not a valid response.
    Unreachable,
    /// Answered with a non-2xx status.
    Status(u16),
    /// Answered with a body larger than the origin's `maxBodyBytes`.
    TooLarge,
}

/// Where a failure happened: the global limit, or one origin (by name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope<'a> {
    /// The worker's global admission.
    Global,
    /// The named origin: its limit, its budget or its call.
    Origin(&'a str),
}

/// The answer to a failure: status, JSON body, and whether it carries
/// `Retry-After` (503s do).
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
    /// The gateway's answer to this failure in `scope`. Failures that only
    /// an origin call has (`Timeout`, `Unreachable`, `Status`, `TooLarge`)
    /// name the origin; in [`Scope::Global`] (never the case) the name is
    /// empty.
    pub fn answer(self, scope: Scope<'_>) -> Answer {
        let origin = match scope {
            Scope::Global => "",
            Scope::Origin(name) => name,
        };
        let (status, body) = match self {
            Self::Overloaded(refusal) => {
                let scope = match scope {
                    Scope::Global => "global".to_string(),
                    Scope::Origin(name) => format!("origin:{name}"),
                };
                let fields = [("scope", scope.as_str()), ("reason", refusal.as_str())];
                (503, error_json("overloaded", &fields))
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
            retry_after: status == 503,
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
