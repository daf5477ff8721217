//! The shape of the `EDGESHED` binding, as serde reads it: one struct per
//! object, `deny_unknown_fields`, camelCase keys. Every key is optional here
//! (`null` means omitted); what is required, and every rule across keys, is
//! checked in `check.rs`.

use super::budget::RawBudget;
use super::classes::{AdmissionKeys, RawRateLimit};
use super::de::{Entries, Flag, Int, List, Section, Text};
use super::fairness::RawFairness;
use super::queueing::RawReserve;
use super::ranges::{Bytes, Millis, NonNegative, Positive, Seconds};
use serde::Deserialize;

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
    pub(super) max_queue_wait: Option<Text>,
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
    pub(super) max_queue_wait: Option<Text>,
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

impl RawRoute {
    /// Its admission keys (`criticality`, `fairness`, `rateLimit`).
    pub(super) fn admission_keys(&self) -> AdmissionKeys<'_> {
        AdmissionKeys {
            criticality: &self.criticality,
            fairness: &self.fairness,
            rate_limit: &self.rate_limit,
        }
    }
}

/// `routes[i].fanout[j]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawCall {
    pub(super) origin: Option<Text>,
    pub(super) path: Option<Text>,
    pub(super) required: Option<Flag>,
}
