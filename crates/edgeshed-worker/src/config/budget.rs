//! `origins.<name>.budget`: the fleet budget of one origin (its raw shape
//! and its checks), kept apart from the other origin keys.

use super::de::{Int, Section, Text};
use super::ranges::Positive;
use super::report::{join, Field, Report};
use super::Budget;
use crate::budget::Unavailable;
use serde::Deserialize;

/// The binding a budget uses when `binding` is omitted.
pub const DEFAULT_BUDGET_BINDING: &str = "EDGESHED_BUDGET";
/// `leaseTtlMs` when omitted: 5 s.
pub const DEFAULT_LEASE_TTL_MS: u64 = 5_000;

/// `leaseTtlMs`: 100 ms to one hour (a renewal at 75 % of it must be
/// possible, and calls are at least a tenth of it apart).
pub(super) struct LeaseMillis;
impl super::de::Range for LeaseMillis {
    const MIN: f64 = 100.0;
    const MAX: f64 = 3_600_000.0;
    const WHAT: &'static str = "an integer from 100 to 3600000 (milliseconds)";
}

/// `origins.<name>.budget`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawBudget {
    pub(super) binding: Option<Text>,
    pub(super) max_in_flight: Option<Int<Positive>>,
    pub(super) adaptive: Option<Section<super::adaptive::RawAdaptive>>,
    pub(super) lease_ttl_ms: Option<Int<LeaseMillis>>,
    pub(super) unavailable: Option<Text>,
}

/// The budget of the origin at `path` (`origins.<name>`): `Some(None)` when
/// it has none, `None` when it is invalid (reported).
pub(super) fn budget(
    report: &mut Report,
    path: &str,
    raw: &Option<Section<RawBudget>>,
) -> Option<Option<Budget>> {
    let Some(section) = raw else {
        return Some(None);
    };
    let path = join(path, "budget");
    let raw = report.open(section, &path)?;
    let binding_path = join(&path, "binding");
    let binding = match report.text(&raw.binding, &binding_path) {
        Field::Absent => Some(DEFAULT_BUDGET_BINDING.to_string()),
        Field::Valid(name) if is_identifier(name) => Some(name.to_string()),
        Field::Valid(name) => {
            report.add(format!(
                "{binding_path} must be a binding name (A-Z a-z 0-9 _, not starting with a digit), got \"{}\"",
                name.escape_default()
            ));
            None
        }
        Field::Invalid => None,
    };
    let max_path = join(&path, "maxInFlight");
    let fixed = report.int(&raw.max_in_flight, &max_path);
    let adaptive = match &raw.adaptive {
        Some(section) => {
            super::adaptive::adaptive(report, &join(&path, "adaptive"), section).map(Some)
        }
        None => Some(None),
    };
    // Exactly one of a fixed fleet limit and an adaptive one.
    let max_in_flight = match (fixed, &raw.adaptive) {
        (Field::Absent, None) => {
            report.add(format!(
                "{max_path} is required (the fleet-wide limit), or {path}.adaptive for a fleet                  limit the object learns"
            ));
            None
        }
        (Field::Absent, Some(_)) => adaptive
            .flatten()
            .map(|adaptive| adaptive.bounds.initial() as u64),
        (Field::Valid(_) | Field::Invalid, Some(_)) => {
            report.add(format!(
                "{path}: maxInFlight and adaptive are both given (choose one: a fixed fleet                  limit, or an adaptive one)"
            ));
            None
        }
        (other, None) => other.or(0),
    };
    let ttl = report.int(&raw.lease_ttl_ms, &join(&path, "leaseTtlMs"));
    let unavailable_path = join(&path, "unavailable");
    let unavailable = match report.text(&raw.unavailable, &unavailable_path) {
        Field::Absent => Some(Unavailable::Local),
        Field::Valid("local") => Some(Unavailable::Local),
        Field::Valid("shed") => Some(Unavailable::Shed),
        Field::Valid(other) => {
            report.add(format!(
                "{unavailable_path} must be \"local\" or \"shed\", got \"{}\"",
                other.escape_default()
            ));
            None
        }
        Field::Invalid => None,
    };
    Some(Some(Budget {
        binding: binding?,
        max_in_flight: u32::try_from(max_in_flight?).ok()?,
        adaptive: adaptive?,
        lease_ttl_ms: ttl.or(DEFAULT_LEASE_TTL_MS)?,
        unavailable: unavailable?,
    }))
}

/// A JavaScript identifier of ASCII letters, digits and `_` (what wrangler
/// accepts as a binding name), 1 to 64 long.
pub(super) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    first_ok && name.len() <= 64 && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
