//! [`Key`]: who a call is for, for per-key fair share and rate limits.

use core::borrow::Borrow;
use core::fmt;
use std::sync::Arc;

/// Who a call is for — a tenant, an API key, a client address — for the
/// per-key fair share of an [`Admission`](crate::admission::Admission) and
/// for per-key [rate limits](crate::rate_limit).
///
/// Cheap to clone (a shared string). Two keys are the same key when their
/// text is equal.
///
/// ```
/// use edgeshed::Key;
///
/// let tenant = Key::from("tenant-42");
/// assert_eq!(tenant, Key::from(String::from("tenant-42")));
/// assert_eq!(tenant.as_str(), "tenant-42");
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key(Arc<str>);

impl Key {
    /// The key's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Key {
    fn from(text: &str) -> Self {
        Self(Arc::from(text))
    }
}

impl From<String> for Key {
    fn from(text: String) -> Self {
        Self(Arc::from(text))
    }
}

impl From<Arc<str>> for Key {
    fn from(text: Arc<str>) -> Self {
        Self(text)
    }
}

impl Borrow<str> for Key {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
