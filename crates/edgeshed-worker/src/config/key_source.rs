//! Where a request's key comes from (`"ip"` or `"header:<name>"`), for a
//! route's `fairness` and `rateLimit`: its model and its check.

use super::de::Text;
use super::report::{Field, Report};

/// Where a request's key comes from: `"ip"` (the `cf-connecting-ip`
/// header) or `"header:<name>"`. A request without it has no key: under
/// `fairness` it belongs to the one keyless key, under `rateLimit` it shares
/// one allowance with the others.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeySource {
    /// `"ip"`: the client address workerd puts in `cf-connecting-ip`.
    Ip,
    /// `"header:<name>"`: that request header (the name in lower case).
    Header(String),
}

impl KeySource {
    /// The request header the key is read from.
    pub fn header(&self) -> &str {
        match self {
            KeySource::Ip => "cf-connecting-ip",
            KeySource::Header(name) => name,
        }
    }
}

/// A key (`"ip"` or `"header:<name>"`) at `path`.
pub(super) fn key_source(
    report: &mut Report,
    value: &Option<Text>,
    path: &str,
) -> Field<KeySource> {
    let text = match report.text(value, path) {
        Field::Valid(text) => text,
        Field::Absent => return Field::Absent,
        Field::Invalid => return Field::Invalid,
    };
    if text == "ip" {
        return Field::Valid(KeySource::Ip);
    }
    match text.strip_prefix("header:") {
        Some(name) if !name.is_empty() && name.bytes().all(is_token_byte) => {
            Field::Valid(KeySource::Header(name.to_ascii_lowercase()))
        }
        _ => {
            report.add(format!(
                "{path} must be \"ip\" or \"header:<name>\" (a header name), got \"{}\"",
                text.escape_default()
            ));
            Field::Invalid
        }
    }
}

/// A byte of an HTTP token (a header name).
fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}
