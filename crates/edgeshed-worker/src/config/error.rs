//! [`ConfigError`]: every problem of a configuration, each naming its key,
//! and who may read them on the admin endpoints.

use super::Admin;
use core::fmt;

/// Most errors listed in one [`ConfigError`] message.
const MAX_LISTED_ERRORS: usize = 20;

/// What is wrong with a configuration: every problem found, each naming
/// its key, and the admin access (`statsToken`, `statsPublic`) the
/// configuration still gave, if those keys were valid: the details are
/// shown there, never in the public 500.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    message: String,
    errors: Vec<String>,
    admin: Admin,
}

impl ConfigError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        let message = message.into();
        Self {
            errors: vec![message.clone()],
            message,
            admin: Admin::Closed,
        }
    }

    /// Several problems: the message is the only one, or lists them all
    /// (`3 configuration errors: a; b; c`; at most 20, then how many more).
    pub fn all(errors: Vec<String>) -> Self {
        let message = match errors.as_slice() {
            [only] => only.clone(),
            _ => {
                let listed = errors.iter().take(MAX_LISTED_ERRORS);
                let mut message = format!("{} configuration errors: ", errors.len());
                message.push_str(&listed.cloned().collect::<Vec<_>>().join("; "));
                if errors.len() > MAX_LISTED_ERRORS {
                    let more = errors.len() - MAX_LISTED_ERRORS;
                    message.push_str(&format!("; and {more} more"));
                }
                message
            }
        };
        Self {
            message,
            errors,
            admin: Admin::Closed,
        }
    }

    /// The same error, readable on the admin endpoints as `admin` allows
    /// (the configuration's own `statsToken` or `statsPublic`).
    pub fn with_admin(self, admin: Admin) -> Self {
        Self { admin, ..self }
    }

    /// Who may read this error on `/__edgeshed/*`: [`Admin::Closed`] unless
    /// the configuration's admin keys were valid (and opened them).
    pub fn admin(&self) -> &Admin {
        &self.admin
    }

    /// The error of a missing or unreadable `EDGESHED` binding: the gateway
    /// fails closed (every request answers 500) instead of guessing a
    /// configuration. `why` says what was found.
    pub fn missing_binding(why: &str) -> Self {
        Self::new(format!(
            "the EDGESHED binding is missing: {why}; set it in wrangler.toml \
             ([vars.EDGESHED], a JSON object, or a JSON string) -- see docs/gateway.md"
        ))
    }

    /// The message: the problem, or all of them.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Each problem on its own, in the order found.
    pub fn errors(&self) -> &[String] {
        &self.errors
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}
