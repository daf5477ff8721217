//! A route's `fairness`: the key whose fair share a request counts against
//! and, optionally, the weights of named key values. Its model, raw shape
//! and checks.

use super::de::{Entries, Int, Range, Section, Text};
use super::key_source::{key_source, KeySource};
use super::report::{join, Field, Report};
use edgeshed::options_schema::MAX_WEIGHT;
use serde::Deserialize;
use std::collections::BTreeMap;

/// A route's `fairness`: `{"key": ..., "weights": {"<key value>": 2}}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fairness {
    /// `key`: where a request's key comes from.
    pub key: KeySource,
    /// `weights`: the weight of named key values (unknown ones weigh 1).
    pub weights: Weights,
}

/// `fairness.weights`: key values and their weights in fair queueing, from
/// 1 to [`MAX_WEIGHT`] (a key of weight 2 gets twice the share of a key of
/// weight 1). A value not named weighs 1, and so do requests without a key.
///
/// ```
/// use edgeshed_worker::config::Weights;
///
/// let weights = Weights::from_iter([("acme".to_string(), 3)]);
/// assert_eq!((weights.of("acme"), weights.of("globex")), (3, 1));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Weights(BTreeMap<String, u32>);

impl Weights {
    /// The weight of the key value `value` (the header's value, trimmed).
    pub fn of(&self, value: &str) -> u32 {
        self.0.get(value).copied().unwrap_or(1)
    }

    /// How many key values have a weight.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no key value has a weight.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<(String, u32)> for Weights {
    fn from_iter<I: IntoIterator<Item = (String, u32)>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

/// A weight: 1 to the core's [`MAX_WEIGHT`] (the npm package's `fairWeight`).
pub(super) struct Weight;
impl Range for Weight {
    const MIN: f64 = 1.0;
    const MAX: f64 = MAX_WEIGHT as f64;
    const WHAT: &'static str = "an integer from 1 to 1000";
}

/// `routes[i].fairness`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawFairness {
    pub(super) key: Option<Text>,
    pub(super) weights: Option<Entries<Int<Weight>>>,
}

/// `fairness` at `path`; `None` when invalid (reported).
pub(super) fn fairness(
    report: &mut Report,
    path: &str,
    section: &Section<RawFairness>,
) -> Option<Fairness> {
    let fair = report.open(section, path)?;
    let key_path = join(path, "key");
    let key = match key_source(report, &fair.key, &key_path) {
        Field::Valid(key) => Some(key),
        Field::Absent => {
            report.add(format!(
                "{key_path} is required (\"ip\" or \"header:<name>\")"
            ));
            None
        }
        Field::Invalid => None,
    };
    let weights = weights(report, &join(path, "weights"), fair.weights.as_ref());
    Some(Fairness {
        key: key?,
        weights: weights?,
    })
}

/// `weights` at `path`: each value's weight; a value that no request's key
/// can equal (blank, or with spaces around it: a key is the header's value
/// trimmed) is an error too.
fn weights(report: &mut Report, path: &str, raw: Option<&Entries<Int<Weight>>>) -> Option<Weights> {
    let entries = match raw {
        None => return Some(Weights::default()),
        Some(Entries(Ok(entries))) => entries,
        Some(Entries(Err(kind))) => {
            report.add(format!(
                "{path} must be an object of key values and their weights, got {kind}"
            ));
            return None;
        }
    };
    let mut weights = BTreeMap::new();
    let mut fine = true;
    for (value, weight) in entries {
        let at = format!("{path}[\"{}\"]", value.escape_default());
        if value.trim().is_empty() || value.trim() != value {
            report.add(format!(
                "{at} can never match: a request's key is its header's value without surrounding spaces, and never blank"
            ));
            fine = false;
            continue;
        }
        match &weight.0 {
            // At most MAX_WEIGHT (1000): fits a u32.
            Ok(weight) => {
                weights.insert(value.clone(), *weight as u32);
            }
            Err(why) => {
                report.add(format!("{at} {why}"));
                fine = false;
            }
        }
    }
    fine.then_some(Weights(weights))
}
