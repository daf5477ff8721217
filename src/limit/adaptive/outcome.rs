//! The one outcome contract: how every finished call counts for an
//! adaptive limit, whichever face (tower, the npm package, the gateway)
//! made it.

/// What a finished call tells an adaptive limit.
///
/// Every call is classified once, by [`Ending::outcome`]:
///
/// * `Served`: the origin did the work. Its round-trip time informs the
///   latency statistics (the window mean, the no-load RTT).
/// * `Dropped`: the origin said it is overloaded, its own timeout passed,
///   or the connection failed. The limit backs off (at most once per
///   window); the call's RTT informs no statistic and never moves a
///   baseline: an instant 503 says nothing about how long work takes.
/// * `Ignored`: the call ended for the caller's sake (an abort, a caller's
///   deadline that cut it short). No sample at all: its RTT was truncated by
///   someone other than the origin, and counting it as a drop would let
///   impatient callers drive the limit of a healthy origin down.
///
/// ```
/// use edgeshed::limit::adaptive::{Ending, Outcome};
///
/// assert_eq!(Ending::Status(503).outcome(), Outcome::Dropped);
/// assert_eq!(Ending::Status(500).outcome(), Outcome::Served);
/// assert_eq!(Ending::DeadlinePassed.outcome(), Outcome::Ignored);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The origin served the call; its RTT counts.
    Served,
    /// An overload answer, the origin's timeout or a connection failure.
    Dropped,
    /// Ended for the caller's sake: no sample.
    Ignored,
}

impl Outcome {
    /// Whether this is [`Outcome::Dropped`].
    pub const fn is_drop(self) -> bool {
        matches!(self, Self::Dropped)
    }
}

/// How a call ended, as the face that made it saw it: the facts that
/// [`outcome`](Self::outcome) classifies. Each face maps what it knows
/// (an HTTP status, a rejection, a timer that fired) to one of these and
/// leaves the classification to the core.
///
/// | ending | outcome |
/// |---|---|
/// | `Status(503)`, `Status(429)` | `Dropped` |
/// | `Status(_)` any other, `Completed` | `Served` |
/// | `Failed`, `TimedOut`, `Overloaded` | `Dropped` |
/// | `DeadlinePassed`, `Aborted` | `Ignored` |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Ending {
    /// The origin answered with this HTTP status (a response, or an error
    /// that carries a `status`).
    Status(u16),
    /// The work finished with no status to judge by: a value, or an error
    /// of the work itself (a bug, a validation failure). The origin did it.
    Completed,
    /// No answer: the connection was refused or reset, or the response was
    /// not one. (Tower's default treats any inner error so.)
    Failed,
    /// The origin's own timeout (for instance the gateway's `timeoutMs`)
    /// passed before it answered: the origin was too slow.
    TimedOut,
    /// A limit between this one and the origin refused the call
    /// (edgeshed's `Overloaded` from an inner layer).
    Overloaded,
    /// The caller's deadline passed while the call ran (edgeshed's
    /// `Expired`, the JS `DeadlineError`, the request's `deadlineMs`): a
    /// deadline set outside the origin cut the call short.
    DeadlinePassed,
    /// The caller aborted the call or went away (cancelled).
    Aborted,
}

impl Ending {
    /// The one classification every face uses (see [`Outcome`]).
    pub const fn outcome(self) -> Outcome {
        match self {
            Self::Status(503 | 429) => Outcome::Dropped,
            Self::Status(_) | Self::Completed => Outcome::Served,
            Self::Failed | Self::TimedOut | Self::Overloaded => Outcome::Dropped,
            Self::DeadlinePassed | Self::Aborted => Outcome::Ignored,
        }
    }
}

impl From<Ending> for Outcome {
    fn from(ending: Ending) -> Self {
        ending.outcome()
    }
}
