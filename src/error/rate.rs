//! [`RateLimited`]: a call refused for its key's sake (HTTP 429), not for
//! the service's.

use core::fmt;
use core::time::Duration;

/// Why a call was refused with [`RateLimited`].
///
/// `#[non_exhaustive]`: a `match` needs a `_` arm; [`as_str`](Self::as_str)
/// names each without one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RateLimitReason {
    /// The call's key held more than its fair share of the concurrency limit
    /// while calls of other keys waited. Reason `"fair_share"`.
    FairShare,
    /// The call's key (or the unkeyed calls together) went over its rate
    /// limit. Reason `"rate"`.
    Rate,
}

impl RateLimitReason {
    /// The reason as the JS errors and the worker's 429 bodies write it:
    /// `"fair_share"` or `"rate"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::FairShare => "fair_share",
            Self::Rate => "rate",
        }
    }
}

impl fmt::Display for RateLimitReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The call was refused because its key asked for too much: over its fair
/// share of the concurrency limit, or over its rate limit. Maps to HTTP 429
/// (with `Retry-After` from [`retry_after`](Self::retry_after) when known),
/// where [`Overloaded`](super::Overloaded) maps to 503.
///
/// `Display` is `rate limited (<reason>)`.
///
/// ```
/// use edgeshed::error::{BoxError, RateLimitReason, RateLimited};
/// use std::time::Duration;
///
/// let error: BoxError = RateLimited::rate(Duration::from_millis(250)).into();
/// let limited = error.downcast_ref::<RateLimited>().unwrap();
/// assert_eq!(limited.reason(), RateLimitReason::Rate);
/// assert_eq!(limited.retry_after(), Some(Duration::from_millis(250)));
/// assert_eq!(error.to_string(), "rate limited (rate)");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RateLimited {
    reason: RateLimitReason,
    /// Whole milliseconds, rounded up (never earlier than allowed);
    /// `NO_TIME` for none. Eight bytes in all keep `AdmitError`, and the
    /// response futures that carry one, as small as before it existed.
    retry_after_ms: u32,
}

/// `retry_after_ms` when no time is known.
const NO_TIME: u32 = u32::MAX;

impl RateLimited {
    /// Over the rate limit; the call would conform after `retry_after`
    /// (kept in whole milliseconds, rounded up; at most about 49 days).
    pub fn rate(retry_after: Duration) -> Self {
        // Whole seconds and the rest apart: no 128-bit division in the wasm.
        let ms = retry_after
            .as_secs()
            .saturating_mul(1000)
            .saturating_add(u64::from(retry_after.subsec_nanos().div_ceil(1_000_000)));
        Self {
            reason: RateLimitReason::Rate,
            retry_after_ms: u32::try_from(ms).map_or(NO_TIME - 1, |ms| ms.min(NO_TIME - 1)),
        }
    }

    /// Over the fair share: no time is known at which it will be under it
    /// (that depends on the other keys' calls).
    pub const fn fair_share() -> Self {
        Self {
            reason: RateLimitReason::FairShare,
            retry_after_ms: NO_TIME,
        }
    }

    /// Why the call was refused.
    pub const fn reason(&self) -> RateLimitReason {
        self.reason
    }

    /// How long until the call would be allowed, if that is known (a rate
    /// limit's earliest allowed time, in whole milliseconds rounded up;
    /// `None` for the fair share).
    pub const fn retry_after(&self) -> Option<Duration> {
        if self.retry_after_ms == NO_TIME {
            None
        } else {
            Some(Duration::from_millis(self.retry_after_ms as u64))
        }
    }
}

impl fmt::Display for RateLimited {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rate limited ({})", self.reason)
    }
}

impl std::error::Error for RateLimited {}
