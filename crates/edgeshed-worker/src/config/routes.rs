//! The checks of `routes`: fan-out and proxy routes, and the origins they
//! name.

use super::de::{List, Section, Text};
use super::raw::{RawCall, RawConfig, RawRoute};
use super::report::{join, Field, Report};
use super::{FanOutCall, Route};

/// `routes`; `names` are the configured origins, in order.
pub(super) fn routes(report: &mut Report, raw: &RawConfig, names: &[&str]) -> Option<Vec<Route>> {
    let items = match &raw.routes {
        None => return Some(Vec::new()),
        Some(List(Ok(items))) => items,
        Some(List(Err(kind))) => {
            report.add(format!("routes must be an array, got {kind}"));
            return None;
        }
    };
    let routes = items
        .iter()
        .enumerate()
        .map(|(index, section)| route(report, &format!("routes[{index}]"), section, names))
        .collect::<Vec<_>>();
    routes.into_iter().collect()
}

/// A request path (`path`, `prefix`, a fan-out call's `path`) at `path`.
fn request_path<'v>(report: &mut Report, value: &'v Option<Text>, path: &str) -> Field<&'v str> {
    let text = match report.text(value, path) {
        Field::Valid(text) => text,
        other => return other,
    };
    if !text.starts_with('/') {
        report.add(format!("{path} must start with \"/\", got \"{text}\""));
        return Field::Invalid;
    }
    if text
        .chars()
        .any(|c| c.is_control() || c == ' ' || c == '#' || c == '\\')
    {
        report.add(format!("{path} must be a plain URL path, got \"{text}\""));
        return Field::Invalid;
    }
    Field::Valid(text)
}

/// The index of the origin named at `path` (a required key).
fn origin_index(
    report: &mut Report,
    value: &Option<Text>,
    path: &str,
    names: &[&str],
) -> Option<usize> {
    match report.text(value, path) {
        Field::Absent => report.add(format!("{path} is required")),
        Field::Valid(name) => match names.iter().position(|known| *known == name) {
            Some(index) => return Some(index),
            None => report.add(format!("{path} names an unknown origin \"{name}\"")),
        },
        Field::Invalid => {}
    }
    None
}

/// The route at `path` (`routes[i]`).
fn route(
    report: &mut Report,
    path: &str,
    section: &Section<RawRoute>,
    names: &[&str],
) -> Option<Route> {
    let raw = report.open(section, path)?;
    let exact = request_path(report, &raw.path, &join(path, "path"));
    let prefix = request_path(report, &raw.prefix, &join(path, "prefix"));
    match (exact, prefix) {
        (Field::Invalid, _) | (_, Field::Invalid) => None,
        (Field::Valid(_), Field::Valid(_)) => {
            report.add(format!(
                "{path} must have either \"path\" or \"prefix\", not both"
            ));
            None
        }
        (Field::Absent, Field::Absent) => {
            report.add(format!(
                "{path} needs \"path\" (a fan-out route) or \"prefix\" (a proxy route)"
            ));
            None
        }
        (Field::Valid(exact), Field::Absent) => fan_out(report, path, raw, exact, names),
        (Field::Absent, Field::Valid(prefix)) => proxy(report, path, raw, prefix, names),
    }
}

fn fan_out(
    report: &mut Report,
    path: &str,
    raw: &RawRoute,
    exact: &str,
    names: &[&str],
) -> Option<Route> {
    if raw.origin.is_some() {
        report.add(format!(
            "{} is only for prefix routes",
            join(path, "origin")
        ));
    }
    let deadline = report.millis(&raw.deadline_ms, &join(path, "deadlineMs"));
    let fanout_path = join(path, "fanout");
    let calls = match &raw.fanout {
        None => {
            report.add(format!("{fanout_path} is required for a fan-out route"));
            None
        }
        Some(List(Err(kind))) => {
            report.add(format!("{fanout_path} must be an array, got {kind}"));
            None
        }
        Some(List(Ok(items))) if items.is_empty() => {
            report.add(format!("{fanout_path} must name at least one origin call"));
            None
        }
        Some(List(Ok(items))) => {
            let calls = items
                .iter()
                .enumerate()
                .map(|(i, item)| call(report, &format!("{fanout_path}[{i}]"), item, names))
                .collect::<Vec<_>>();
            calls.into_iter().collect::<Option<Vec<_>>>()
        }
    };
    let admission = super::classes::admission(report, path, raw.admission_keys());
    Some(Route::FanOut {
        path: exact.to_string(),
        deadline: match deadline {
            Field::Absent => None,
            Field::Valid(deadline) => Some(deadline),
            Field::Invalid => return None,
        },
        calls: calls?,
        admission: admission?,
    })
    .filter(|_| raw.origin.is_none())
}

fn proxy(
    report: &mut Report,
    path: &str,
    raw: &RawRoute,
    prefix: &str,
    names: &[&str],
) -> Option<Route> {
    let mut misplaced = false;
    for (key, present) in [
        ("fanout", raw.fanout.is_some()),
        ("deadlineMs", raw.deadline_ms.is_some()),
    ] {
        if present {
            report.add(format!("{} is only for fan-out routes", join(path, key)));
            misplaced = true;
        }
    }
    let ends_well = prefix.ends_with('/');
    if !ends_well {
        report.add(format!(
            "{} must end with \"/\", got \"{prefix}\"",
            join(path, "prefix")
        ));
    }
    let admission = super::classes::admission(report, path, raw.admission_keys());
    let origin = origin_index(report, &raw.origin, &join(path, "origin"), names)?;
    let admission = admission?;
    (ends_well && !misplaced).then(|| Route::Proxy {
        prefix: prefix.to_string(),
        origin,
        admission,
    })
}

/// A fan-out call at `path` (`routes[i].fanout[j]`).
fn call(
    report: &mut Report,
    path: &str,
    section: &Section<RawCall>,
    names: &[&str],
) -> Option<FanOutCall> {
    let raw = report.open(section, path)?;
    let origin = origin_index(report, &raw.origin, &join(path, "origin"), names);
    let call_path = match request_path(report, &raw.path, &join(path, "path")) {
        Field::Absent => {
            report.add(format!("{} is required", join(path, "path")));
            None
        }
        Field::Valid(text) => Some(text.to_string()),
        Field::Invalid => None,
    };
    let required = report.flag(&raw.required, &join(path, "required")).or(true);
    Some(FanOutCall {
        origin: origin?,
        path: call_path?,
        required: required?,
    })
}
