//! `origins.<name>.adaptive`: an origin limit that an algorithm moves
//! (`aimd`, `gradient2`, `vegas`) instead of a fixed `maxInFlight`. Its raw
//! shape, its checks, and the model the handler builds the limiter from.

use super::de::{Int, Section, Text};
use super::ranges::Positive;
use super::report::{join, Field, Report};
use edgeshed::limit::adaptive::{AnyLimit, Bounds, UnknownAlgorithm};
use serde::Deserialize;

/// An origin's adaptive limit: the algorithm and the range it moves in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Adaptive {
    /// The algorithm's configuration name, one of [`AnyLimit::NAMES`].
    pub algorithm: &'static str,
    /// `initialLimit`, `minLimit`, `maxLimit`.
    pub bounds: Bounds,
}

impl Adaptive {
    /// A fresh algorithm of this configuration, starting at `initialLimit`.
    /// (The name was checked against [`AnyLimit::NAMES`]; the error is
    /// only for a core that would refuse a name it lists.)
    pub fn build(&self) -> Result<AnyLimit, UnknownAlgorithm> {
        AnyLimit::named(self.algorithm, self.bounds)
    }
}

/// `origins.<name>.adaptive`, as serde reads it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawAdaptive {
    pub(super) algorithm: Option<Text>,
    pub(super) initial_limit: Option<Int<Positive>>,
    pub(super) min_limit: Option<Int<Positive>>,
    pub(super) max_limit: Option<Int<Positive>>,
}

/// The adaptive limit at `path` (`origins.<name>.adaptive`): the algorithm
/// is required; the bounds default to the edge defaults (6, 1, 64), and an
/// omitted `initialLimit` to 6 brought into `[minLimit, maxLimit]`.
pub(super) fn adaptive(
    report: &mut Report,
    path: &str,
    section: &Section<RawAdaptive>,
) -> Option<Adaptive> {
    let raw = report.open(section, path)?;
    let algorithm = algorithm(report, &raw.algorithm, &join(path, "algorithm"));
    let initial_path = join(path, "initialLimit");
    let (min_path, max_path) = (join(path, "minLimit"), join(path, "maxLimit"));
    let initial = report.int(&raw.initial_limit, &initial_path);
    let min = report.int(&raw.min_limit, &min_path);
    let max = report.int(&raw.max_limit, &max_path);
    let edge = Bounds::EDGE;
    let (min, max) = (min.or(edge.min() as u64)?, max.or(edge.max() as u64)?);
    if max < min {
        report.add(format!(
            "{max_path} must be at least {min_path} ({min}), got {max}"
        ));
        return None;
    }
    let initial = match initial {
        Field::Absent => (edge.initial() as u64).clamp(min, max),
        Field::Valid(initial) if (min..=max).contains(&initial) => initial,
        Field::Valid(initial) => {
            report.add(format!(
                "{initial_path} must lie within [{min_path}, {max_path}] = [{min}, {max}], got {initial}"
            ));
            return None;
        }
        Field::Invalid => return None,
    };
    let bounds = Bounds::new(initial as usize, min as usize, max as usize)
        .map_err(|why| report.add(format!("{path}: {why}")))
        .ok()?;
    Some(Adaptive {
        algorithm: algorithm?,
        bounds,
    })
}

/// `algorithm`: required, one of [`AnyLimit::NAMES`] (exact spelling).
fn algorithm(report: &mut Report, value: &Option<Text>, path: &str) -> Option<&'static str> {
    let valid = AnyLimit::NAMES.map(|name| format!("\"{name}\"")).join(", ");
    match report.text(value, path) {
        Field::Absent => {
            report.add(format!("{path} is required (one of {valid})"));
            None
        }
        Field::Valid(name) => {
            let known = AnyLimit::NAMES.into_iter().find(|known| *known == name);
            if known.is_none() {
                report.add(format!("{path} must be one of {valid}, got \"{name}\""));
            }
            known
        }
        Field::Invalid => None,
    }
}

/// The adaptive limit of the origin at `path` (`origins.<name>`): `None`
/// when invalid (reported), `Some(None)` when the origin has a fixed limit.
/// `maxInFlight` and `adaptive` exclude each other.
pub(super) fn of_origin(
    report: &mut Report,
    path: &str,
    max_in_flight: bool,
    section: &Option<Section<RawAdaptive>>,
) -> Option<Option<Adaptive>> {
    let Some(section) = section else {
        return Some(None);
    };
    if max_in_flight {
        report.add(format!(
            "{path}: maxInFlight and adaptive are both given (choose one: a fixed \
             maxInFlight, or an adaptive limit)"
        ));
    }
    let adaptive = adaptive(report, &join(path, "adaptive"), section)?;
    (!max_in_flight).then_some(Some(adaptive))
}
