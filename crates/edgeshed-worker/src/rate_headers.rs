//! The `RateLimit-Policy` and `RateLimit` response headers of a
//! rate-limited route (draft-ietf-httpapi-ratelimit-headers: a policy named
//! `"edgeshed"` with its quota `q` and window `w`, and what is left of it:
//! `r` calls remaining, `t` seconds until whole again). Pure: tested natively.
//!
//! The quota is the rate's burst and the window the time the GCRA takes to
//! refill a whole burst, so `r` never exceeds `q` and `t` never `w`.
//!
//! ```
//! use edgeshed::rate_limit::Rate;
//! use edgeshed_worker::rate_headers::{current, policy};
//! use std::time::Duration;
//!
//! let rate = Rate::per_second(10).unwrap().with_burst(20).unwrap();
//! assert_eq!(policy(&rate), r#""edgeshed";q=20;w=2"#);
//! assert_eq!(current(19, Duration::from_millis(100)), r#""edgeshed";r=19;t=1"#);
//! assert_eq!(current(0, Duration::ZERO), r#""edgeshed";r=0;t=0"#);
//! ```

use core::time::Duration;
use edgeshed::rate_limit::Rate;

/// The name of the worker's policy in both headers.
pub const POLICY_NAME: &str = "edgeshed";

/// Whole seconds, rounded up.
fn ceil_seconds(duration: Duration) -> u64 {
    duration.as_secs() + u64::from(duration.subsec_nanos() > 0)
}

/// The `RateLimit-Policy` value of `rate`: `"edgeshed";q=<burst>;w=<seconds>`
/// (`w` at least 1).
pub fn policy(rate: &Rate) -> String {
    let refill = rate
        .interval()
        .saturating_mul(u32::try_from(rate.burst()).unwrap_or(u32::MAX));
    let window = ceil_seconds(refill).max(1);
    format!("\"{POLICY_NAME}\";q={};w={window}", rate.burst())
}

/// The `RateLimit` value after a call: `"edgeshed";r=<remaining>;t=<seconds>`
/// (`t` rounded up).
pub fn current(remaining: u64, reset: Duration) -> String {
    format!("\"{POLICY_NAME}\";r={remaining};t={}", ceil_seconds(reset))
}
