//! Origin URLs and the joining of request paths onto them, such that a
//! client can never choose the host — nor leave the origin's base path.

use core::fmt;

/// A validated origin base URL: `http(s)://host[:port][/base/path]`, without
/// user info, query or fragment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OriginUrl {
    /// `scheme://host[:port]`, lower-cased scheme and host.
    origin: String,
    /// The base path without a trailing slash (`""` for the root).
    base_path: String,
}

/// Why a proxied path was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathRefused {
    /// `..` segments would climb above the origin's base path.
    EscapesBase,
    /// A character that has no business in a URL path (backslash, control).
    BadCharacter,
}

impl fmt::Display for PathRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::EscapesBase => "path climbs above the origin's base path",
            Self::BadCharacter => "path contains a character not allowed in a URL path",
        })
    }
}

fn is_host_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '.' || c == '-'
}

impl OriginUrl {
    /// Parses and validates an origin URL; the error says what is wrong.
    pub fn parse(url: &str) -> Result<OriginUrl, String> {
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| format!("must be an absolute http(s) URL, got \"{url}\""))?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(format!("must use http or https, got \"{url}\""));
        }
        if rest.contains(['?', '#']) {
            return Err(format!("must not have a query or fragment, got \"{url}\""));
        }
        let (authority, path) = match rest.find('/') {
            Some(at) => rest.split_at(at),
            None => (rest, ""),
        };
        if authority.contains('@') {
            return Err(format!("must not contain user info, got \"{url}\""));
        }
        let (host, port) = split_host_port(authority);
        let host_ok = if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']'))
        {
            !inner.is_empty()
                && inner
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
        } else {
            !host.is_empty() && host.chars().all(is_host_char)
        };
        if !host_ok {
            return Err(format!("has an invalid host, got \"{url}\""));
        }
        if let Some(port) = port {
            let valid = !port.is_empty()
                && port.len() <= 5
                && port.chars().all(|c| c.is_ascii_digit())
                && port.parse::<u32>().is_ok_and(|p| (1..=65_535).contains(&p));
            if !valid {
                return Err(format!("has an invalid port, got \"{url}\""));
            }
        }
        if path
            .chars()
            .any(|c| c.is_control() || c == '\\' || c == ' ')
        {
            return Err(format!("has an invalid path, got \"{url}\""));
        }
        let segments = normalize_segments(path.split('/'))
            .map_err(|_| format!("has a path with \"..\" segments, got \"{url}\""))?;
        let base_path = segments.iter().map(|s| format!("/{s}")).collect::<String>();
        let authority = authority.to_ascii_lowercase();
        Ok(OriginUrl {
            origin: format!("{scheme}://{authority}"),
            base_path,
        })
    }

    /// `scheme://host[:port]`: what every URL built from this one starts with.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The base path (`""` for the root).
    pub fn base_path(&self) -> &str {
        &self.base_path
    }

    /// The URL of a configured fan-out path (trusted configuration).
    pub fn join_configured(&self, path: &str) -> String {
        format!("{}{}{}", self.origin, self.base_path, path)
    }

    /// The URL for the untrusted remainder `rest` of a proxied request path
    /// (everything after the route prefix, still percent-encoded) and its
    /// query. Empty and `.` segments are dropped, `..` resolved within the
    /// base path, percent-encoded dots included; the host is never taken from
    /// the request. A literal `?` or `#` in `rest` stays part of the path
    /// (encoded as `%3F` / `%23`): it must not turn the end of a segment
    /// into a query or fragment, which would let a dot segment such as
    /// `.%2e?x` slip through (found by the `proxy_path` fuzz target).
    pub fn join_untrusted(&self, rest: &str, query: Option<&str>) -> Result<String, PathRefused> {
        if rest.chars().any(|c| c.is_control() || c == '\\') {
            return Err(PathRefused::BadCharacter);
        }
        let segments = normalize_segments(rest.split('/'))?;
        let mut url = format!("{}{}", self.origin, self.base_path);
        for segment in &segments {
            url.push('/');
            for c in segment.chars() {
                match c {
                    '?' => url.push_str("%3F"),
                    '#' => url.push_str("%23"),
                    c => url.push(c),
                }
            }
        }
        if segments.is_empty() || rest.ends_with('/') {
            url.push('/');
        }
        if let Some(query) = query.filter(|q| !q.is_empty()) {
            if query.chars().any(|c| c.is_control() || c == '#') {
                return Err(PathRefused::BadCharacter);
            }
            url.push('?');
            url.push_str(query);
        }
        Ok(url)
    }
}

/// Splits `host[:port]`, where host may be a bracketed IPv6 literal.
fn split_host_port(authority: &str) -> (&str, Option<&str>) {
    if authority.starts_with('[') {
        return match authority.find(']') {
            Some(end) => {
                let (host, after) = authority.split_at(end + 1);
                // Anything after `]` other than `:port` makes the whole
                // authority the host, which the host check refuses (found by
                // the `proxy_path` fuzz target: `http://[::1]junk` and
                // `http://[::1]2` used to be accepted).
                match after.strip_prefix(':') {
                    Some(port) => (host, Some(port)),
                    None if after.is_empty() => (host, None),
                    None => (authority, None),
                }
            }
            None => (authority, None),
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    }
}

/// Whether a raw segment is `.` or `..`, percent-encoded dots included.
fn dot_segment(segment: &str) -> Option<bool> {
    let lower = segment.to_ascii_lowercase();
    match lower.as_str() {
        "." | "%2e" => Some(false),
        ".." | ".%2e" | "%2e." | "%2e%2e" => Some(true),
        _ => None,
    }
}

/// Whether a segment smuggles a `..` past a server that decodes `%2F`/`%5C`
/// into separators or reads `;` as a path parameter (`..;`, `%2F..%2F`,
/// `a%5C..%5Cb`): the segment is percent-decoded and split at `/`, `\` and
/// `;`, and any `..` piece counts.
fn hides_dot_dot(segment: &str) -> bool {
    if !segment.contains("..") && !segment.to_ascii_lowercase().contains("%2e") {
        return false;
    }
    let decoded = percent_decode_ascii(segment);
    decoded.split(['/', '\\', ';']).any(|piece| piece == "..")
}

/// Decodes `%XX` escapes of ASCII bytes; anything else is kept as is.
fn percent_decode_ascii(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('%') {
        let (before, escape) = rest.split_at(at);
        out.push_str(before);
        let decoded = escape
            .get(1..3)
            .and_then(|hex| u8::from_str_radix(hex, 16).ok())
            .filter(u8::is_ascii);
        match decoded {
            Some(byte) => {
                out.push(char::from(byte));
                rest = escape.get(3..).unwrap_or_default();
            }
            None => {
                out.push('%');
                rest = escape.get(1..).unwrap_or_default();
            }
        }
    }
    out.push_str(rest);
    out
}

/// Resolves `.`/`..` and drops empty segments; `..` past the start is refused.
fn normalize_segments<'a>(
    segments: impl Iterator<Item = &'a str>,
) -> Result<Vec<&'a str>, PathRefused> {
    let mut kept = Vec::new();
    for segment in segments {
        match dot_segment(segment) {
            Some(true) => {
                if kept.pop().is_none() {
                    return Err(PathRefused::EscapesBase);
                }
            }
            Some(false) => {}
            None if segment.is_empty() => {}
            None if hides_dot_dot(segment) => return Err(PathRefused::EscapesBase),
            None => kept.push(segment),
        }
    }
    Ok(kept)
}

/// The path and the query (without `?`; `None` when empty) of a request URL
/// as the host serializes it (`scheme://authority/path?query#fragment`).
///
/// In place of parsing it again with `new URL(...)`: that was 4 % of the
/// gateway's CPU on its shed path (benches/e2e/profile.mjs). A serialized
/// http(s) URL has no `/`, `?` or `#` before its path (the serializer
/// percent-encodes them in user info), so the path starts at the first `/`
/// after `://` and ends at the first `?` or `#`.
pub fn split_request_url(url: &str) -> (&str, Option<&str>) {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let without_fragment = after_scheme
        .split_once('#')
        .map_or(after_scheme, |(before, _)| before);
    let Some(path_at) = without_fragment.find(['/', '?']) else {
        return ("/", None);
    };
    let target = without_fragment.get(path_at..).unwrap_or_default();
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path, Some(query).filter(|q| !q.is_empty())),
        None => (target, None),
    };
    (if path.is_empty() { "/" } else { path }, query)
}
