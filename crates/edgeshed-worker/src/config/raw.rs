//! The shape of the `EDGESHED` binding, as serde reads it: one struct per
//! object, `deny_unknown_fields`, camelCase keys. Every key is optional here
//! (`null` means omitted); what is required, and every rule across keys, is
//! checked in `check.rs`.

use super::budget::RawBudget;
use super::classes::{RawFairness, RawRateLimit};
use super::de::{Entries, Flag, Int, List, Range, Section, Text};
use super::queueing::RawReserve;
use edgeshed::options_schema;
use serde::Deserialize;

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

/// The binding.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawConfig {
    pub(super) retry_after_seconds: Option<Int<Seconds>>,
    pub(super) stats_token: Option<Text>,
    pub(super) stats_public: Option<Flag>,
    pub(super) global: Option<Section<RawLimit>>,
    pub(super) origins: Option<Entries<Section<RawOrigin>>>,
    pub(super) routes: Option<List<Section<RawRoute>>>,
}

/// `global`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawLimit {
    pub(super) max_in_flight: Option<Int<Positive>>,
    pub(super) max_queue: Option<Int<NonNegative>>,
    pub(super) queue_timeout_ms: Option<Int<Millis>>,
    pub(super) queue_discipline: Option<Text>,
    pub(super) codel_target_ms: Option<Int<Millis>>,
    pub(super) reserve: Option<Section<RawReserve>>,
}

/// `origins.<name>`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawOrigin {
    pub(super) url: Option<Text>,
    pub(super) max_in_flight: Option<Int<Positive>>,
    pub(super) max_queue: Option<Int<NonNegative>>,
    pub(super) queue_timeout_ms: Option<Int<Millis>>,
    pub(super) queue_discipline: Option<Text>,
    pub(super) codel_target_ms: Option<Int<Millis>>,
    pub(super) reserve: Option<Section<RawReserve>>,
    pub(super) timeout_ms: Option<Int<Millis>>,
    pub(super) max_body_bytes: Option<Int<Bytes>>,
    pub(super) adaptive: Option<Section<super::adaptive::RawAdaptive>>,
    pub(super) budget: Option<Section<RawBudget>>,
}

/// `routes[i]`: a fan-out route (`path`) or a proxy route (`prefix`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawRoute {
    pub(super) path: Option<Text>,
    pub(super) deadline_ms: Option<Int<Millis>>,
    pub(super) fanout: Option<List<Section<RawCall>>>,
    pub(super) prefix: Option<Text>,
    pub(super) origin: Option<Text>,
    pub(super) criticality: Option<Text>,
    pub(super) fairness: Option<Section<RawFairness>>,
    pub(super) rate_limit: Option<Section<RawRateLimit>>,
}

/// `routes[i].fanout[j]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawCall {
    pub(super) origin: Option<Text>,
    pub(super) path: Option<Text>,
    pub(super) required: Option<Flag>,
}
