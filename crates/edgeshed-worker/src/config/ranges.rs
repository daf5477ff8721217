//! The numeric ranges of the binding's keys (the [`Range`]s of `Int`):
//! counts and milliseconds from the core's options table, which the npm
//! package shares.

use super::de::Range;
use edgeshed::options_schema;

/// Largest accepted count (`maxInFlight`, `maxQueue`): the core options
/// table's, which the npm package shares.
const MAX_COUNT: f64 = options_schema::MAX_COUNT as f64;

/// `maxInFlight`: 1 to 1,000,000.
pub(super) struct Positive;
impl Range for Positive {
    const MIN: f64 = 1.0;
    const MAX: f64 = MAX_COUNT;
    const WHAT: &'static str = "a positive integer";
}

/// `maxQueue`: 0 to 1,000,000.
pub(super) struct NonNegative;
impl Range for NonNegative {
    const MIN: f64 = 0.0;
    const MAX: f64 = MAX_COUNT;
    const WHAT: &'static str = "a non-negative integer";
}

/// Milliseconds: 1 to what `setTimeout` accepts (the core options table's
/// [`MAX_MILLIS`](options_schema::MAX_MILLIS)).
pub(super) struct Millis;
impl Range for Millis {
    const MIN: f64 = 1.0;
    const MAX: f64 = options_schema::MAX_MILLIS as f64;
    const WHAT: &'static str = "a positive integer (milliseconds)";
}

/// `maxBodyBytes`: 1 to 128 MiB (the isolate's memory).
pub(super) struct Bytes;
impl Range for Bytes {
    const MIN: f64 = 1.0;
    const MAX: f64 = 128.0 * 1024.0 * 1024.0;
    const WHAT: &'static str = "a positive integer (bytes)";
}

/// `retryAfterSeconds`: 0 to a day.
pub(super) struct Seconds;
impl Range for Seconds {
    const MIN: f64 = 0.0;
    const MAX: f64 = 86_400.0;
    const WHAT: &'static str = "an integer from 0 to 86400";
}
