//! The checks after deserialization: types and ranges found by `de.rs`,
//! required keys, and the rules across keys. Every problem is reported, each
//! naming its key; a [`Config`] is built only when there is none.

use super::de::{Entries, Int, Section};
use super::queueing::QueueingKeys;
use super::ranges::{Millis, NonNegative, Positive};
use super::raw::{RawConfig, RawLimit, RawOrigin};
use super::report::{join, Field, Report};
use super::{Admin, Config, ConfigError, Limit, Origin};
use super::{DEFAULT_GLOBAL_MAX_IN_FLIGHT, DEFAULT_MAX_BODY_BYTES};
use super::{DEFAULT_ORIGIN_MAX_IN_FLIGHT, DEFAULT_ORIGIN_TIMEOUT};
use crate::proxy_path::OriginUrl;
use core::time::Duration;

/// The whole configuration.
/// An error carries the admin access of `statsToken` / `statsPublic` when
/// those keys are valid, so that the operator can read it there.
pub(super) fn config(raw: &Section<RawConfig>) -> Result<Config, ConfigError> {
    let mut report = Report::default();
    let mut access = None;
    let config = report
        .open(raw, "EDGESHED")
        .and_then(|raw| build(&mut report, raw, &mut access));
    report
        .finish(config)
        .map_err(|error| error.with_admin(access.unwrap_or(Admin::Closed)))
}

fn build(report: &mut Report, raw: &RawConfig, access: &mut Option<Admin>) -> Option<Config> {
    let retry = report.int(&raw.retry_after_seconds, "retryAfterSeconds");
    let admin = admin(report, raw);
    access.clone_from(&admin);
    let global = match &raw.global {
        None => Some(Limit::shedding(DEFAULT_GLOBAL_MAX_IN_FLIGHT)),
        Some(section) => report.open(section, "global").and_then(|global| {
            let RawLimit {
                max_in_flight,
                max_queue,
                queue_timeout_ms,
                queue_discipline,
                codel_target_ms,
                max_queue_wait,
                reserve,
            } = global;
            let keys = (max_in_flight, max_queue, queue_timeout_ms);
            let limit = limit(report, "global", keys, DEFAULT_GLOBAL_MAX_IN_FLIGHT);
            let queueing = QueueingKeys {
                discipline: queue_discipline,
                codel_target_ms,
                queue_wait: max_queue_wait,
                reserve,
            };
            super::queueing::queueing(report, "global", queueing, limit)
        }),
    };
    let (origins, names) = origins(report, raw);
    let routes = super::routes::routes(report, raw, &names);
    Some(Config {
        retry_after_seconds: retry.or(1)? as u32,
        admin: admin?,
        global: global?,
        origins: origins?,
        routes: routes?,
    })
}

/// `statsToken` and `statsPublic`: who may read `/__edgeshed/*`.
fn admin(report: &mut Report, raw: &RawConfig) -> Option<Admin> {
    let token = match report.text(&raw.stats_token, "statsToken") {
        Field::Absent => None,
        Field::Valid(token) => Some(token),
        Field::Invalid => return None,
    };
    let public = report.flag(&raw.stats_public, "statsPublic").or(false)?;
    match (token, public) {
        (Some(""), _) => report.add(
            "statsToken must not be empty (omit it to keep /__edgeshed/* closed, \
             or set \"statsPublic\": true to open it)"
                .into(),
        ),
        (Some(_), true) => report.add(
            "statsPublic must not be true when statsToken is set (choose one: \
             a token, or public access)"
                .into(),
        ),
        (Some(token), false) => return Some(Admin::Bearer(token.to_string())),
        (None, true) => return Some(Admin::Public),
        (None, false) => return Some(Admin::Closed),
    }
    None
}

/// The keys of a limit: `maxInFlight`, `maxQueue`, `queueTimeoutMs`.
type LimitKeys<'r> = (
    &'r Option<Int<Positive>>,
    &'r Option<Int<NonNegative>>,
    &'r Option<Int<Millis>>,
);

/// A limit at `path`; a queue needs a timeout (every wait is bounded), and
/// a timeout needs a queue.
fn limit(report: &mut Report, path: &str, keys: LimitKeys<'_>, default: usize) -> Option<Limit> {
    let (max_in_flight, max_queue, queue_timeout) = keys;
    let max_in_flight = report.int(max_in_flight, &join(path, "maxInFlight"));
    let max_queue = report.int(max_queue, &join(path, "maxQueue")).or(0);
    let queue_timeout = report.millis(queue_timeout, &join(path, "queueTimeoutMs"));
    let queue_timeout = match (max_queue?, queue_timeout) {
        (0, Field::Valid(_)) => {
            // As the npm package: a timeout that would never apply is a
            // mistake (a queue forgotten, or a key in the wrong limit).
            report.add(format!(
                "{} needs a queue: {} must be > 0 (without one nothing waits)",
                join(path, "queueTimeoutMs"),
                join(path, "maxQueue")
            ));
            None
        }
        (0, timeout) => timeout.or(Duration::ZERO),
        (_, Field::Valid(timeout)) => Some(timeout),
        (_, Field::Invalid) => None,
        (_, Field::Absent) => {
            report.add(format!(
                "{} is required when {} > 0 (every wait must be bounded)",
                join(path, "queueTimeoutMs"),
                join(path, "maxQueue")
            ));
            None
        }
    };
    Some(Limit {
        max_in_flight: max_in_flight.or(default as u64)? as usize,
        max_queue: max_queue? as usize,
        queue_timeout: queue_timeout?,
        ..Limit::shedding(default)
    })
}

/// `origins`, and the names routes may refer to (every entry's, valid or
/// not, so that an invalid origin is not also reported as unknown).
fn origins<'r>(report: &mut Report, raw: &'r RawConfig) -> (Option<Vec<Origin>>, Vec<&'r str>) {
    let entries = match &raw.origins {
        None => return (Some(Vec::new()), Vec::new()),
        Some(Entries(Ok(entries))) => entries,
        Some(Entries(Err(kind))) => {
            report.add(format!("origins must be an object, got {kind}"));
            return (None, Vec::new());
        }
    };
    let names = entries.iter().map(|(name, _)| name.as_str()).collect();
    let origins = entries
        .iter()
        .map(|(name, section)| origin(report, name, section))
        .collect::<Vec<_>>();
    (origins.into_iter().collect(), names)
}

/// The origin `name`.
fn origin(report: &mut Report, name: &str, section: &Section<RawOrigin>) -> Option<Origin> {
    let name_is_plain = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !name_is_plain {
        report.add(format!(
            "origins.\"{name}\" is not a valid origin name (1 to 64 of A-Z a-z 0-9 - _)"
        ));
        return None;
    }
    let path = format!("origins.{name}");
    let raw = report.open(section, &path)?;
    let url_path = join(&path, "url");
    let url = match report.text(&raw.url, &url_path) {
        Field::Absent => {
            report.add(format!("{url_path} is required"));
            None
        }
        Field::Valid(url) => OriginUrl::parse(url)
            .map_err(|why| report.add(format!("{url_path} {why}")))
            .ok(),
        Field::Invalid => None,
    };
    let keys = (&raw.max_in_flight, &raw.max_queue, &raw.queue_timeout_ms);
    let limit = limit(report, &path, keys, DEFAULT_ORIGIN_MAX_IN_FLIGHT);
    let queueing = QueueingKeys {
        discipline: &raw.queue_discipline,
        codel_target_ms: &raw.codel_target_ms,
        queue_wait: &raw.max_queue_wait,
        reserve: &raw.reserve,
    };
    let limit = super::queueing::queueing(report, &path, queueing, limit);
    let adaptive =
        super::adaptive::of_origin(report, &path, raw.max_in_flight.is_some(), &raw.adaptive);
    let timeout = report.millis(&raw.timeout_ms, &join(&path, "timeoutMs"));
    let max_body_bytes = report.int(&raw.max_body_bytes, &join(&path, "maxBodyBytes"));
    let budget = super::budget::budget(report, &path, &raw.budget);
    let (mut limit, adaptive) = (limit?, adaptive?);
    if let Some(adaptive) = &adaptive {
        // The semaphore starts at the algorithm's initial limit.
        limit.max_in_flight = adaptive.bounds.initial();
    }
    Some(Origin {
        name: name.to_string(),
        url: url?,
        limit,
        adaptive,
        timeout: Some(timeout.or(DEFAULT_ORIGIN_TIMEOUT)?),
        max_body_bytes: max_body_bytes.or(DEFAULT_MAX_BODY_BYTES)?,
        budget: budget?,
    })
}
