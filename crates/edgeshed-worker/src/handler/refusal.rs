//! Why a request was refused for lack of capacity (503), and its answer:
//! `{"error":"overloaded","scope":"<scope>","reason":"<reason>"}` with
//! `Retry-After`.

use super::respond::{error_json, ResponseParts};
use edgeshed::admission::AdmitError;
use edgeshed::error::OverloadCause;

/// The `reason` of a 503. The design contract lists `limit`, `queue_timeout`,
/// `budget` and `displaced` (a queued request pushed out by a more critical
/// one, with criticality); a variant is added here with its cause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The scope's limit was reached and its queue full (or disabled).
    Limit,
    /// The request waited in the scope's queue until `queueTimeoutMs`.
    QueueTimeout,
    /// The fleet budget had no permit for it while it could wait.
    Budget,
}

impl Refusal {
    /// The `reason` string of the 503 body.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Limit => "limit",
            Self::QueueTimeout => "queue_timeout",
            Self::Budget => "budget",
        }
    }

    /// The refusal a local limiter's admission error stands for (a cause
    /// the core adds later counts as the limit until it is mapped here).
    pub(crate) fn of(error: &AdmitError) -> Self {
        match error.overloaded().map(|overloaded| overloaded.cause()) {
            Some(OverloadCause::QueueTimeout) => Self::QueueTimeout,
            _ => Self::Limit,
        }
    }

    /// The 503 answer for a refusal in `scope` (`global`, `origin:<name>`).
    pub(crate) fn response(self, scope: &str, retry_after: &str) -> ResponseParts {
        let body = error_json("overloaded", &[("scope", scope), ("reason", self.as_str())]);
        ResponseParts::json(503, body).header("retry-after", retry_after)
    }
}
