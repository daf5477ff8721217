//! The admission keys of a route: `criticality`, `fairness` (whose fair
//! share a request counts against, `fairness.rs`) and `rateLimit` (per
//! isolate, or Cloudflare's Rate Limiting binding). Their model, raw shape
//! and checks.

use super::budget::is_identifier;
use super::de::{Int, Range, Section, Text};
use super::fairness::{fairness, Fairness, RawFairness};
use super::key_source::{key_source, KeySource};
use super::ranges::{Positive, Seconds};
use super::report::{join, Field, Report};
use core::time::Duration;
use edgeshed::admission::Criticality;
use edgeshed::rate_limit::Rate;
use serde::Deserialize;

/// How a route's requests are admitted besides the limits they pass.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RouteAdmission {
    /// `criticality`, if the route names one (`None` is `default`).
    pub criticality: Option<Criticality>,
    /// `fairness`: the key a request's fair share is counted for, and
    /// the weights of named key values.
    pub fairness: Option<Fairness>,
    /// `rateLimit`: checked before the request is admitted anywhere.
    pub rate_limit: Option<RateLimit>,
}

impl RouteAdmission {
    /// The route's criticality: the most its requests may have.
    pub fn criticality(&self) -> Criticality {
        self.criticality.unwrap_or_default()
    }
}

/// A route's `rateLimit`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RateLimit {
    /// `perSecond` or `perMinute`, `burst`, `maxKeys`: a GCRA per key in
    /// this isolate.
    Local {
        /// Whose rate it is (`None`: the route's requests share one).
        key: Option<KeySource>,
        /// The rate, burst and key-table bound.
        rate: Rate,
    },
    /// `binding`: Cloudflare's Rate Limiting binding (`[[ratelimits]]` in
    /// wrangler.toml), which only says yes or no.
    Binding {
        /// The `env` binding.
        binding: String,
        /// Whose rate it is (`None`: the route's requests share one).
        key: Option<KeySource>,
        /// `periodSeconds` (10 or 60, as configured in wrangler.toml;
        /// default 60): the `Retry-After` of a refusal.
        period: Duration,
    },
}

/// `perSecond`, `perMinute`, `burst`: 1 to the core options table's
/// [`MAX_RATE`](edgeshed::options_schema::MAX_RATE), as in the npm package.
pub(super) struct RateCount;
impl Range for RateCount {
    const MIN: f64 = 1.0;
    const MAX: f64 = edgeshed::options_schema::MAX_RATE as f64;
    const WHAT: &'static str = "a positive integer";
}

/// `routes[i].rateLimit`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawRateLimit {
    pub(super) key: Option<Text>,
    pub(super) per_second: Option<Int<RateCount>>,
    pub(super) per_minute: Option<Int<RateCount>>,
    pub(super) burst: Option<Int<RateCount>>,
    pub(super) max_keys: Option<Int<Positive>>,
    pub(super) binding: Option<Text>,
    pub(super) period_seconds: Option<Int<Seconds>>,
}

/// The admission keys of one route, as serde read them.
pub(super) struct AdmissionKeys<'r> {
    pub(super) criticality: &'r Option<Text>,
    pub(super) fairness: &'r Option<Section<RawFairness>>,
    pub(super) rate_limit: &'r Option<Section<RawRateLimit>>,
}

/// The admission keys of the route at `path`; `None` when invalid (reported).
pub(super) fn admission(
    report: &mut Report,
    path: &str,
    raw: AdmissionKeys<'_>,
) -> Option<RouteAdmission> {
    let criticality_path = join(path, "criticality");
    let criticality = match report.text(raw.criticality, &criticality_path) {
        Field::Absent => Some(None),
        Field::Valid(name) => name
            .parse::<Criticality>()
            .map(Some)
            .map_err(|why| report.add(format!("{criticality_path}: {why}")))
            .ok(),
        Field::Invalid => None,
    };
    let fairness = match raw.fairness {
        None => Some(None),
        Some(section) => fairness(report, &join(path, "fairness"), section).map(Some),
    };
    let rate_limit = match raw.rate_limit {
        None => Some(None),
        Some(section) => rate_limit(report, &join(path, "rateLimit"), section).map(Some),
    };
    Some(RouteAdmission {
        criticality: criticality?,
        fairness: fairness?,
        rate_limit: rate_limit?,
    })
}

/// `rateLimit` at `path`: either a local rate (`perSecond` or `perMinute`,
/// optional `burst`, `maxKeys`) or a `binding` (optional `periodSeconds`).
fn rate_limit(
    report: &mut Report,
    path: &str,
    section: &Section<RawRateLimit>,
) -> Option<RateLimit> {
    let raw = report.open(section, path)?;
    let key = match key_source(report, &raw.key, &join(path, "key")) {
        Field::Absent => Some(None),
        Field::Valid(key) => Some(Some(key)),
        Field::Invalid => None,
    };
    let binding_path = join(path, "binding");
    match report.text(&raw.binding, &binding_path) {
        Field::Valid(binding) => {
            let mut fine = is_identifier(binding);
            if !fine {
                report.add(format!(
                    "{binding_path} must be a binding name (A-Z a-z 0-9 _, not starting with a digit), got \"{}\"",
                    binding.escape_default()
                ));
            }
            for (name, present) in [
                ("perSecond", raw.per_second.is_some()),
                ("perMinute", raw.per_minute.is_some()),
                ("burst", raw.burst.is_some()),
                ("maxKeys", raw.max_keys.is_some()),
            ] {
                if present {
                    report.add(format!(
                        "{} is not for a binding (its limit is set in wrangler.toml's [[ratelimits]])",
                        join(path, name)
                    ));
                    fine = false;
                }
            }
            let period_path = join(path, "periodSeconds");
            let period = match report.int(&raw.period_seconds, &period_path) {
                Field::Absent => Some(60),
                Field::Valid(seconds @ (10 | 60)) => Some(seconds),
                Field::Valid(other) => {
                    report.add(format!("{period_path} must be 10 or 60, got {other}"));
                    None
                }
                Field::Invalid => None,
            };
            let (key, period) = (key?, period?);
            fine.then(|| RateLimit::Binding {
                binding: binding.to_string(),
                key,
                period: Duration::from_secs(period),
            })
        }
        Field::Invalid => None,
        Field::Absent => local_rate(report, path, raw)
            .and_then(|rate| Some(RateLimit::Local { key: key?, rate })),
    }
}

/// The local rate of `rateLimit` at `path`.
fn local_rate(report: &mut Report, path: &str, raw: &RawRateLimit) -> Option<Rate> {
    if raw.period_seconds.is_some() {
        report.add(format!(
            "{} is only for a binding",
            join(path, "periodSeconds")
        ));
    }
    let per_second = report.int(&raw.per_second, &join(path, "perSecond"));
    let per_minute = report.int(&raw.per_minute, &join(path, "perMinute"));
    let burst = report.int(&raw.burst, &join(path, "burst"));
    let max_keys = report.int(&raw.max_keys, &join(path, "maxKeys"));
    let rate = match (per_second, per_minute) {
        (Field::Valid(n), Field::Absent) => Rate::per_second(n),
        (Field::Absent, Field::Valid(n)) => Rate::per_minute(n),
        (Field::Absent, Field::Absent) => {
            report.add(format!(
                "{path} needs perSecond or perMinute (or a binding)"
            ));
            return None;
        }
        (Field::Valid(_), Field::Valid(_)) => {
            report.add(format!(
                "{path}: perSecond and perMinute are both given (choose one)"
            ));
            return None;
        }
        _ => return None,
    };
    let mut rate = rate
        .map_err(|why| report.add(format!("{path}: {why}")))
        .ok()?;
    if let Field::Valid(burst) = burst {
        rate = rate.with_burst(burst).ok()?;
    }
    if let Field::Valid(max_keys) = max_keys {
        rate = rate.with_max_keys(max_keys as usize).ok()?;
    }
    (burst != Field::Invalid && max_keys != Field::Invalid && raw.period_seconds.is_none())
        .then_some(rate)
}
