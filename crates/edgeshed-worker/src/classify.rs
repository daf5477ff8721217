//! What a request brings to admission, read from its headers: its
//! criticality (the route's, or lower with `edgeshed-criticality`) and its
//! key (for the fair share and the rate limit). Pure: tested natively.
//!
//! ```
//! use edgeshed::admission::Criticality;
//! use edgeshed_worker::classify::{criticality, key};
//!
//! // The header may lower a route's criticality...
//! assert_eq!(criticality(Criticality::Critical, Some("sheddable")), Criticality::Sheddable);
//! // ...never raise it: a client cannot make itself critical.
//! assert_eq!(criticality(Criticality::Default, Some("critical")), Criticality::Default);
//! // An unknown value is ignored.
//! assert_eq!(criticality(Criticality::Default, Some("urgent")), Criticality::Default);
//!
//! assert_eq!(key(Some(" tenant-1 ")), Some(edgeshed::Key::from("tenant-1")));
//! assert_eq!(key(Some("")), None);
//! // The whole value is the key: values that share a long prefix stay apart.
//! let jwt = |user: &str| format!("Bearer {}.{user}", "e".repeat(300));
//! assert_ne!(key(Some(&jwt("alice"))), key(Some(&jwt("bob"))));
//! ```

use edgeshed::admission::Criticality;
use edgeshed::Key;

/// The request header that may lower a request's criticality.
pub const CRITICALITY_HEADER: &str = "edgeshed-criticality";

/// The criticality of a request on a route of `route` criticality, given
/// its `edgeshed-criticality` header: the lower of the two. A value that
/// is not `critical`, `default` or `sheddable` (ASCII case and surrounding
/// spaces aside) is ignored.
pub fn criticality(route: Criticality, header: Option<&str>) -> Criticality {
    let asked = header.and_then(|value| value.trim().to_ascii_lowercase().parse().ok());
    asked.map_or(route, |asked| route.lowered_to(asked))
}

/// The value a request's key header holds, trimmed; `None` when there is
/// no header or it is blank.
pub fn key_value(value: Option<&str>) -> Option<&str> {
    Some(value?.trim()).filter(|value| !value.is_empty())
}

/// The key of a request whose key header holds `value` ([`key_value`]): a
/// keyed hash of the *whole* value ([`Key`]), so long values never merge
/// and a key costs the same memory however long its value.
pub fn key(value: Option<&str>) -> Option<Key> {
    key_value(value).map(Key::from)
}
