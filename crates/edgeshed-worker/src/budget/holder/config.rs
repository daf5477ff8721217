//! How a holder behaves, and what it is told about waiting requests.

use super::super::fallback::Unavailable;

/// How a [`LeaseHolder`](super::LeaseHolder) behaves. Every interval
/// derives from the lease TTL ([`HolderConfig::new`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HolderConfig {
    /// The isolate's own limit for the origin (`maxInFlight`): the holder
    /// never asks for more, and its effective limit never exceeds it.
    pub local_limit: u32,
    /// The least time between two calls that do not ask for more, and before
    /// an unmet ask is repeated (TTL / 20).
    pub linger_ms: u64,
    /// The longest a request waits for a permit the fleet does not have now
    /// (TTL / 10; past it, only until the answer of a call under way).
    pub patience_ms: u64,
    /// How long the holder waits after a failed call (TTL / 10).
    pub retry_ms: u64,
    /// The longest an admitted call may last (the origin's `timeoutMs`,
    /// at most half the TTL; 0 when unknown): the holder admits no call that
    /// could outlive its lease, so a holder killed mid-lease has no call left
    /// when the table grants its permits again.
    pub cutoff_ms: u64,
    /// What to admit while the table is unreachable.
    pub unavailable: Unavailable,
}

impl HolderConfig {
    /// The configuration for leases of `ttl_ms` (intervals at least 1 ms).
    pub fn new(local_limit: u32, ttl_ms: u64, unavailable: Unavailable) -> Self {
        let linger_ms = (ttl_ms / 20).max(1);
        Self {
            local_limit,
            linger_ms,
            patience_ms: 2 * linger_ms,
            retry_ms: (ttl_ms / 10).max(1),
            cutoff_ms: 0,
            unavailable,
        }
    }

    /// The same configuration for calls that last at most `timeout_ms`
    /// (capped at half of `ttl_ms`, the lease TTL).
    pub fn calls_last(mut self, timeout_ms: u64, ttl_ms: u64) -> Self {
        self.cutoff_ms = timeout_ms.min(ttl_ms / 2);
        self
    }
}

/// The requests waiting for a permit in an isolate: how many, and until when
/// the longest-waiting of them is willing to wait (ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Waiting {
    /// Requests admitted by the local limiter that wait for a lease permit.
    pub count: u32,
    /// The latest time any of them still waits until.
    pub until: u64,
}

impl Waiting {
    /// Nobody waits.
    pub const NONE: Waiting = Waiting { count: 0, until: 0 };
}
