//! The headers a proxy forwards: never hop-by-hop ones.

/// Headers that describe one connection, not the message: never forwarded.
const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// The headers of `from` minus hop-by-hop ones (and those named in
/// `Connection`), minus `extra_excluded`.
pub(super) fn forwardable(
    from: &web_sys::Headers,
    extra_excluded: &[&str],
) -> Vec<(String, String)> {
    let named: Vec<String> = from
        .get("connection")
        .ok()
        .flatten()
        .map(|value| {
            value
                .split(',')
                .map(|v| v.trim().to_ascii_lowercase())
                .collect()
        })
        .unwrap_or_default();
    let mut kept = Vec::new();
    let Ok(Some(entries)) = js_sys::try_iter(from) else {
        return kept;
    };
    for entry in entries.flatten() {
        // `[name, value]` pairs, read through `Reflect` (which catches).
        let part = |index| {
            js_sys::Reflect::get_u32(&entry, index)
                .ok()
                .and_then(|v| v.as_string())
        };
        let (Some(name), Some(value)) = (part(0), part(1)) else {
            continue;
        };
        let lower = name.to_ascii_lowercase();
        if HOP_BY_HOP.contains(&lower.as_str())
            || named.contains(&lower)
            || extra_excluded.contains(&lower.as_str())
        {
            continue;
        }
        kept.push((lower, value));
    }
    kept
}
