//! [`InvalidConfig`]: a limiter refused at construction, naming the parameter.

use core::fmt;

/// The configuration parameter an [`InvalidConfig`] refuses.
///
/// `#[non_exhaustive]`: later parameters (adaptive limits) may be added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Parameter {
    /// `max_in_flight`: the concurrency limit.
    MaxInFlight,
    /// The queue timeout of a bounded queue (`Policy::Queue { timeout, .. }`).
    QueueTimeout,
    /// The fraction of the limit kept for critical calls (`Reserve::new`).
    ReserveCritical,
    /// The fraction kept for default calls (`Reserve::new`); also refused
    /// when both fractions add up to more than the whole limit.
    ReserveDefault,
    /// The queue discipline: codel needs a bounded queue (`Policy::Queue`).
    QueueDiscipline,
    /// Codel's target: longer than zero and shorter than the queue timeout.
    CodelTarget,
    /// A rate limit's rate (`Rate::per_second` / `Rate::per_minute`).
    Rate,
    /// A rate limit's burst.
    Burst,
    /// The most keys a rate limit tracks.
    MaxKeys,
    /// The longest a rate-limited call may wait for its turn.
    MaxWait,
    /// The queue wait rule: `QueueWait::Auto` needs a bounded queue.
    MaxQueueWait,
}

impl Parameter {
    /// The parameter's name as written in the Rust API (`max_in_flight`, `timeout`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Self::MaxInFlight => "max_in_flight",
            Self::QueueTimeout => "timeout",
            Self::ReserveCritical => "reserve.critical",
            Self::ReserveDefault => "reserve.default",
            Self::QueueDiscipline => "queue_discipline",
            Self::CodelTarget => "codel_target",
            Self::Rate => "rate",
            Self::Burst => "burst",
            Self::MaxKeys => "max_keys",
            Self::MaxWait => "max_wait",
            Self::MaxQueueWait => "queue_wait",
        }
    }
}

/// A limiter was configured with a value that cannot work; the constructor
/// refused it instead of building a limiter that misbehaves.
///
/// The same rules as the JS `Limiter` (which throws a `RangeError` naming the
/// option): a limit of zero would answer "service overloaded" to every call,
/// and a queue timeout of zero would shed every waiter as a timeout.
///
/// ```
/// use edgeshed::error::Parameter;
/// use edgeshed::limit::ConcurrencyLimitLayer;
///
/// let error = ConcurrencyLimitLayer::new(0).unwrap_err();
/// assert_eq!(error.parameter(), Parameter::MaxInFlight);
/// assert_eq!(error.to_string(), "max_in_flight must be at least 1, got 0");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InvalidConfig {
    parameter: Parameter,
}

impl InvalidConfig {
    pub(crate) const fn new(parameter: Parameter) -> Self {
        Self { parameter }
    }

    /// Which parameter was refused.
    pub const fn parameter(&self) -> Parameter {
        self.parameter
    }
}

impl fmt::Display for InvalidConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.parameter {
            Parameter::MaxInFlight => f.write_str("max_in_flight must be at least 1, got 0"),
            Parameter::QueueTimeout => f.write_str(
                "timeout (the queue timeout) must be longer than zero when max_queue > 0: every wait must be bounded",
            ),
            Parameter::ReserveCritical => {
                f.write_str("reserve.critical must be a fraction of the limit, from 0 to 1")
            }
            Parameter::ReserveDefault => f.write_str(
                "reserve.default must be a fraction of the limit, from 0 to 1, and reserve.critical + reserve.default at most 1",
            ),
            Parameter::QueueDiscipline => f.write_str(
                "queue_discipline codel needs a bounded queue (Policy::Queue with max_queue > 0): its interval is the queue timeout",
            ),
            Parameter::CodelTarget => f.write_str(
                "codel_target must be longer than zero and shorter than the queue timeout",
            ),
            Parameter::Rate => {
                f.write_str("rate must allow at least 1 call per period, and at most 10^9 per second")
            }
            Parameter::Burst => f.write_str("burst must be at least 1"),
            Parameter::MaxKeys => f.write_str("max_keys must be at least 1"),
            Parameter::MaxWait => f.write_str("max_wait must be longer than zero"),
            Parameter::MaxQueueWait => f.write_str(
                "queue_wait auto needs a bounded queue (Policy::Queue with max_queue > 0)",
            ),
        }
    }
}

impl std::error::Error for InvalidConfig {}
