//! What the configuration checker reports ([`Checked`]: `edgeshed check`,
//! `scripts/check-config.mjs`, through the worker's own wasm), and what a
//! misconfigured gateway answers: only that it is misconfigured in public
//! ([`PUBLIC_MISCONFIGURED`]), the details on the admin endpoints
//! ([`misconfigured_details`]).

use crate::config::{Config, ConfigError, NamedBinding, Warning};
use crate::failure::error_json;
use serde::Serialize;

/// The body of every public answer of a misconfigured gateway (500): no
/// error text, no origin URL.
pub const PUBLIC_MISCONFIGURED: &str = r#"{"error":"misconfigured"}"#;

/// The outcome of checking a configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Checked {
    /// Every error, each naming its key (none: the gateway accepts it).
    pub errors: Vec<String>,
    /// Every warning of a valid configuration ([`Config::warnings`]).
    pub warnings: Vec<Warning>,
    /// The `env` bindings a valid configuration needs ([`Config::bindings`]).
    pub bindings: Vec<NamedBinding>,
}

impl Checked {
    /// The report of `read` (the validator's outcome).
    ///
    /// ```
    /// use edgeshed_worker::check::Checked;
    /// use edgeshed_worker::config::Config;
    ///
    /// let binding = serde_json::json!({ "global": { "maxInflight": 4 } });
    /// let checked = Checked::of(&Config::from_deserializer(&binding));
    /// assert!(checked.errors[0].starts_with("global.maxInflight is not a known key"));
    /// ```
    pub fn of(read: &Result<Config, ConfigError>) -> Self {
        match read {
            Ok(config) => Self {
                errors: Vec::new(),
                warnings: config.warnings(),
                bindings: config.bindings(),
            },
            Err(error) => Self {
                errors: error.errors().to_vec(),
                ..Self::default()
            },
        }
    }

    /// As JSON: `{"errors": [..], "warnings": [{"path", "message"}],
    /// "bindings": [{"path", "name", "kind"}]}`.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| r#"{"errors":["unprintable"]}"#.into())
    }
}

/// What the admin endpoints answer a reader the configuration lets in
/// while it is invalid: `{"error": "misconfigured", "message": .., "errors": [..]}`.
///
/// ```
/// use edgeshed_worker::check::misconfigured_details;
/// use edgeshed_worker::config::ConfigError;
///
/// let body = misconfigured_details(&ConfigError::new("origins.a.url is required"));
/// assert_eq!(
///     body,
///     r#"{"error":"misconfigured","message":"origins.a.url is required","errors":["origins.a.url is required"]}"#
/// );
/// ```
pub fn misconfigured_details(error: &ConfigError) -> String {
    let mut body = error_json("misconfigured", &[("message", error.message())]);
    let errors = serde_json::to_string(error.errors()).unwrap_or_else(|_| "[]".into());
    body.pop();
    body.push_str(&format!(",\"errors\":{errors}}}"));
    body
}
