//! The report of a configuration check: each key's checked value ([`Field`])
//! and every problem found, each naming its key ([`Report`]).

use super::de::{Fault, Flag, Int, Range, Section, Text};
use super::ranges::Millis;
use super::ConfigError;
use core::time::Duration;

/// A key's value after its check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Field<T> {
    /// Omitted (or `null`).
    Absent,
    /// Present and valid.
    Valid(T),
    /// Present and invalid (already reported).
    Invalid,
}

impl<T> Field<T> {
    /// The value, `default` when omitted, `None` when invalid.
    pub(super) fn or(self, default: T) -> Option<T> {
        match self {
            Field::Absent => Some(default),
            Field::Valid(value) => Some(value),
            Field::Invalid => None,
        }
    }
}

/// The problems found so far.
#[derive(Default)]
pub(super) struct Report {
    errors: Vec<String>,
}

/// `path.key`.
pub(super) fn join(path: &str, key: &str) -> String {
    format!("{path}.{key}")
}

impl Report {
    /// Records a problem.
    pub(super) fn add(&mut self, message: String) {
        self.errors.push(message);
    }

    /// The object at `path`, after reporting its unknown keys (or that it is
    /// not an object).
    pub(super) fn open<'s, T>(&mut self, section: &'s Section<T>, path: &str) -> Option<&'s T> {
        for key in &section.unknown {
            self.add(format!(
                "{} is not a known key (expected one of: {})",
                join(path, key),
                section.known.join(", ")
            ));
        }
        match &section.value {
            Ok(value) => Some(value),
            Err(Fault::NotObject(kind)) => {
                self.add(format!("{path} must be an object, got {kind}"));
                None
            }
            Err(Fault::Unreadable(why)) => {
                self.add(format!("{path} could not be read ({why})"));
                None
            }
        }
    }

    /// An integer key.
    pub(super) fn int<R: Range>(&mut self, value: &Option<Int<R>>, path: &str) -> Field<u64> {
        match value {
            None => Field::Absent,
            Some(Int(Ok(n), _)) => Field::Valid(*n),
            Some(Int(Err(why), _)) => {
                self.add(format!("{path} {why}"));
                Field::Invalid
            }
        }
    }

    /// A key in milliseconds.
    pub(super) fn millis(&mut self, value: &Option<Int<Millis>>, path: &str) -> Field<Duration> {
        match self.int(value, path) {
            Field::Absent => Field::Absent,
            Field::Valid(ms) => Field::Valid(Duration::from_millis(ms)),
            Field::Invalid => Field::Invalid,
        }
    }

    /// A string key.
    pub(super) fn text<'v>(&mut self, value: &'v Option<Text>, path: &str) -> Field<&'v str> {
        match value {
            None => Field::Absent,
            Some(Text(Ok(text))) => Field::Valid(text),
            Some(Text(Err(kind))) => {
                self.add(format!("{path} must be a string, got {kind}"));
                Field::Invalid
            }
        }
    }

    /// A boolean key.
    pub(super) fn flag(&mut self, value: &Option<Flag>, path: &str) -> Field<bool> {
        match value {
            None => Field::Absent,
            Some(Flag(Ok(flag))) => Field::Valid(*flag),
            Some(Flag(Err(kind))) => {
                self.add(format!("{path} must be a boolean, got {kind}"));
                Field::Invalid
            }
        }
    }

    /// The outcome: `value` if nothing was reported, else every problem.
    pub(super) fn finish<T>(self, value: Option<T>) -> Result<T, ConfigError> {
        match value {
            Some(value) if self.errors.is_empty() => Ok(value),
            _ if self.errors.is_empty() => Err(ConfigError::new("EDGESHED could not be read")),
            _ => Err(ConfigError::all(self.errors)),
        }
    }
}
