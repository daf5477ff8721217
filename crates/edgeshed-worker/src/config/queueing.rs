//! The queueing keys of a limit (`global`, `origins.<name>`):
//! `queueDiscipline` (`"fifo"` or `"codel"`), `codelTargetMs`,
//! `maxQueueWait` (`"timeout"` or `"auto"`) and `reserve` (the part of the
//! limit kept for higher criticalities). Their raw shape and their checks.

use super::de::{Fraction, Int, Section, Text};
use super::ranges::Millis;
use super::report::{join, Field, Report};
use super::Limit;
use edgeshed::admission::{QueueDiscipline, QueueWait, Reserve};
use edgeshed::options_schema::{QUEUE_DISCIPLINES, QUEUE_WAITS};
use serde::Deserialize;

/// `reserve`, as serde reads it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawReserve {
    pub(super) critical: Option<Fraction>,
    pub(super) default: Option<Fraction>,
}

/// The queueing keys of one limit, as serde read them.
pub(super) struct QueueingKeys<'r> {
    pub(super) discipline: &'r Option<Text>,
    pub(super) codel_target_ms: &'r Option<Int<Millis>>,
    pub(super) queue_wait: &'r Option<Text>,
    pub(super) reserve: &'r Option<Section<RawReserve>>,
}

/// Completes `limit` (at `path`, already checked) with its queue discipline
/// and its reserve. `codel` needs a bounded queue (`maxQueue > 0`) and a
/// `codelTargetMs` shorter than `queueTimeoutMs`; `codelTargetMs` is only
/// for `codel`. `None` when invalid (reported).
pub(super) fn queueing(
    report: &mut Report,
    path: &str,
    keys: QueueingKeys<'_>,
    limit: Option<Limit>,
) -> Option<Limit> {
    let discipline_path = join(path, "queueDiscipline");
    let target_path = join(path, "codelTargetMs");
    // The core options table's names, the first the default: "fifo", "codel".
    let [fifo, codel_name] = QUEUE_DISCIPLINES;
    let codel = match report.text(keys.discipline, &discipline_path) {
        Field::Absent => Some(false),
        Field::Valid(name) if name == fifo => Some(false),
        Field::Valid(name) if name == codel_name => Some(true),
        Field::Valid(other) => {
            report.add(format!(
                "{discipline_path} must be \"{fifo}\" or \"{codel_name}\", got \"{}\"",
                other.escape_default()
            ));
            None
        }
        Field::Invalid => None,
    };
    let target = report.millis(keys.codel_target_ms, &target_path);
    let queue_wait = queue_wait(report, path, keys.queue_wait, limit.as_ref());
    let reserve = reserve(report, &join(path, "reserve"), keys.reserve);
    let (mut limit, codel, queue_wait, reserve) = (limit?, codel?, queue_wait?, reserve?);
    limit.reserve = reserve;
    limit.queue_wait = queue_wait;
    if !codel {
        if target != Field::Absent {
            report.add(format!(
                "{target_path} is only for {discipline_path} \"{codel_name}\""
            ));
            return None;
        }
        return Some(limit);
    }
    let target = target.or(QueueDiscipline::DEFAULT_CODEL_TARGET)?;
    if limit.max_queue == 0 {
        report.add(format!(
            "{discipline_path} \"{codel_name}\" needs a queue: {} must be > 0",
            join(path, "maxQueue")
        ));
        return None;
    }
    if target >= limit.queue_timeout {
        report.add(format!(
            "{target_path} ({} ms) must be shorter than {} ({} ms)",
            target.as_millis(),
            join(path, "queueTimeoutMs"),
            limit.queue_timeout.as_millis()
        ));
        return None;
    }
    limit.discipline = QueueDiscipline::Codel { target };
    Some(limit)
}

/// `maxQueueWait` of the limit at `path`: `"timeout"` (the default) or
/// `"auto"`, which needs a queue (`maxQueue > 0`). `None` when invalid
/// (reported; also when the limit itself is, which was reported already).
fn queue_wait(
    report: &mut Report,
    path: &str,
    raw: &Option<Text>,
    limit: Option<&Limit>,
) -> Option<QueueWait> {
    let wait_path = join(path, "maxQueueWait");
    let [timeout, auto] = QUEUE_WAITS;
    match report.text(raw, &wait_path) {
        Field::Absent => Some(QueueWait::Timeout),
        Field::Valid(name) if name == timeout => Some(QueueWait::Timeout),
        Field::Valid(name) if name == auto => {
            if limit?.max_queue == 0 {
                report.add(format!(
                    "{wait_path} \"{auto}\" needs a queue: {} must be > 0",
                    join(path, "maxQueue")
                ));
                return None;
            }
            Some(QueueWait::Auto)
        }
        Field::Valid(other) => {
            report.add(format!(
                "{wait_path} must be \"{timeout}\" or \"{auto}\", got \"{}\"",
                other.escape_default()
            ));
            None
        }
        Field::Invalid => None,
    }
}

/// `reserve` at `path`: `Some(None)` when omitted; both fractions default
/// to the contract's (critical 0.1, default 0.2) and may not sum above 1.
fn reserve(
    report: &mut Report,
    path: &str,
    raw: &Option<Section<RawReserve>>,
) -> Option<Option<Reserve>> {
    let Some(section) = raw else {
        return Some(None);
    };
    let raw = report.open(section, path)?;
    let fallback = Reserve::default();
    let mut fraction = |value: &Option<Fraction>, key: &str, default: f64| match value {
        None => Some(default),
        Some(Fraction(Ok(n))) => Some(*n),
        Some(Fraction(Err(why))) => {
            report.add(format!("{} {why}", join(path, key)));
            None
        }
    };
    let critical = fraction(&raw.critical, "critical", fallback.critical());
    let default = fraction(&raw.default, "default", fallback.default_share());
    let (critical, default) = (critical?, default?);
    match Reserve::new(critical, default) {
        Ok(reserve) => Some(Some(reserve)),
        Err(_) => {
            report.add(format!(
                "{path}: critical + default must not exceed 1 (the whole limit), got {critical} + {default}"
            ));
            None
        }
    }
}
