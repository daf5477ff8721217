use crate::error::{InvalidConfig, Parameter};
use core::time::Duration;

/// What an [`Admission`](super::Admission) does with a request that arrives
/// while `max_in_flight` requests are already in flight.
///
/// `#[non_exhaustive]`: more policies may come (adaptive limits are next),
/// so a `match` needs a `_` arm. The variants are built as usual, or with
/// [`Policy::queue`].
///
/// ```compile_fail
/// use edgeshed::Policy;
/// // error: non-exhaustive patterns: `_` not covered
/// fn bounded(policy: Policy) -> bool {
///     match policy {
///         Policy::Wait => false,
///         Policy::Shed | Policy::Queue { .. } => true,
///     }
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Policy {
    /// Wait, FIFO, for as long as it takes (tower's `ConcurrencyLimit`).
    /// Only a deadline bounds the wait.
    Wait,
    /// Reject at once with `Overloaded` (tower's `LoadShed` over `ConcurrencyLimit`,
    /// without its parked-waiter pitfall).
    Shed,
    /// Wait, FIFO, but at most `max_queue` requests at a time and each for at
    /// most `timeout`; the rest are rejected with `Overloaded` (HAProxy's
    /// `maxqueue` and `timeout queue`). `max_queue: 0` behaves like [`Policy::Shed`].
    Queue {
        /// The most requests that may wait at once.
        max_queue: usize,
        /// The longest a request may wait.
        timeout: Duration,
    },
}

impl Policy {
    /// [`Policy::Queue`]: at most `max_queue` waiters, each for at most `timeout`.
    pub const fn queue(max_queue: usize, timeout: Duration) -> Self {
        Self::Queue { max_queue, timeout }
    }

    /// Refuses what the JS `Limiter` refuses: a limit of zero (every call
    /// would be shed) and a zero queue timeout with `max_queue > 0` (every
    /// waiter would time out at once). `max_queue: 0` sheds, whatever its timeout.
    pub(crate) fn validate(self, max_in_flight: usize) -> Result<Self, InvalidConfig> {
        if max_in_flight == 0 {
            return Err(InvalidConfig::new(Parameter::MaxInFlight));
        }
        match self {
            Self::Queue { max_queue, timeout } if max_queue > 0 && timeout.is_zero() => {
                Err(InvalidConfig::new(Parameter::QueueTimeout))
            }
            policy => Ok(policy),
        }
    }
}
