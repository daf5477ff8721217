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
//! assert_eq!(key(Some(" tenant-1 ")).map(|k| k.as_str().to_string()), Some("tenant-1".into()));
//! assert_eq!(key(Some("")), None);
//! ```

use edgeshed::admission::Criticality;
use edgeshed::Key;

/// The request header that may lower a request's criticality.
pub const CRITICALITY_HEADER: &str = "edgeshed-criticality";

/// The longest key kept, in bytes: a longer header value is cut (at a
/// character boundary), so a client cannot make the key tables hold
/// arbitrarily large strings.
pub const MAX_KEY_BYTES: usize = 256;

/// The criticality of a request on a route of `route` criticality, given
/// its `edgeshed-criticality` header: the lower of the two. A value that
/// is not `critical`, `default` or `sheddable` (ASCII case and surrounding
/// spaces aside) is ignored.
pub fn criticality(route: Criticality, header: Option<&str>) -> Criticality {
    let asked = header.and_then(|value| value.trim().to_ascii_lowercase().parse().ok());
    asked.map_or(route, |asked| route.lowered_to(asked))
}

/// The key of a request whose key header holds `value`: trimmed, at most
/// [`MAX_KEY_BYTES`]; `None` when there is no header or it is blank.
pub fn key(value: Option<&str>) -> Option<Key> {
    let value = value?.trim();
    if value.is_empty() {
        return None;
    }
    let mut end = value.len().min(MAX_KEY_BYTES);
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    value.get(..end).map(Key::from)
}
