//! The npm package's option data and types are what the core's options
//! table (src/options_schema.rs) renders: `src/options-schema.js` (what
//! `options.js` validates by) and `src/options.d.ts` (included by
//! `typescript.rs`). A native test: it fails, naming the first differing
//! line, when a committed file differs; `EDGESHED_BLESS=1 cargo test -p
//! edgeshed-js --test options_schema` rewrites them.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod js;
mod ts;

use std::path::Path;

/// `committed` (a path under the crate) holds `rendered`, or is rewritten
/// with it under `EDGESHED_BLESS=1`.
fn check(committed: &str, rendered: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(committed);
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if current == rendered {
        return;
    }
    if std::env::var_os("EDGESHED_BLESS").is_some_and(|value| value == "1") {
        std::fs::write(&path, rendered).expect("write the rendered file");
        return;
    }
    let (line, ours, theirs) = current
        .lines()
        .map(Some)
        .chain(std::iter::repeat(None))
        .zip(rendered.lines().map(Some).chain(std::iter::repeat(None)))
        .enumerate()
        .find(|(_, (a, b))| a != b)
        .map(|(at, (a, b))| {
            (
                at + 1,
                a.unwrap_or("<end of file>"),
                b.unwrap_or("<end of file>"),
            )
        })
        .unwrap_or((0, "", "(a difference in line endings)"));
    panic!(
        "crates/edgeshed-js/{committed} is not what src/options_schema.rs renders.\n\
         First difference, line {line}:\n  committed: {ours}\n  rendered:  {theirs}\n\
         If the table changed, rewrite it: EDGESHED_BLESS=1 cargo test -p edgeshed-js --test options_schema"
    );
}

#[test]
fn options_schema_js_is_rendered_from_the_core_table() {
    check("src/options-schema.js", &js::render());
}

#[test]
fn options_d_ts_is_rendered_from_the_core_table() {
    check("src/options.d.ts", &ts::render());
}

#[test]
fn the_table_names_what_the_faces_validate() {
    use edgeshed::options_schema::{find, integer_range, Kind, CALL, LIMITER};
    // Keys options.js's cross-key rules and callFacts read by name.
    for path in [
        "maxInFlight",
        "adaptive.algorithm",
        "adaptive.initialLimit",
        "adaptive.minLimit",
        "adaptive.maxLimit",
        "maxQueue",
        "queueTimeoutMs",
        "bodyTimeoutMs",
        "reserve.critical",
        "reserve.default",
        "queueDiscipline",
        "codelTargetMs",
        "rate.perSecond",
        "rate.perMinute",
        "rate.burst",
        "rate.maxKeys",
    ] {
        assert!(find(LIMITER, path).is_some(), "LIMITER has no {path}");
    }
    // call-options.js reads exactly these, by name, in this order.
    let call: Vec<&str> = CALL.iter().map(|spec| spec.key).collect();
    assert_eq!(
        call,
        ["signal", "deadlineMs", "criticality", "key", "fairWeight"]
    );
    // callFacts packs fairWeight - 1 in radix Call::MAX_WEIGHT; options.rs decodes by it.
    assert_eq!(
        integer_range(CALL, "fairWeight"),
        Some((1, u64::from(edgeshed::admission::Call::MAX_WEIGHT)))
    );
    assert_eq!(
        integer_range(LIMITER, "adaptive.maxLimit"),
        Some((1, 1_000_000))
    );
    // callFacts, glue.js and options.rs number the criticalities by their
    // place in Criticality::ALL: critical, default, sheddable.
    let Some(Kind::OneOf { values, .. }) = find(CALL, "criticality").map(|spec| spec.kind) else {
        panic!("criticality is not a OneOf");
    };
    assert_eq!(values, ["critical", "default", "sheddable"]);
}

#[test]
fn the_hand_written_types_state_the_table_s_ranges() {
    use edgeshed::options_schema::{integer_range, LIMITER, SET_LIMIT};
    // typescript.rs keeps the structural types (which key goes with which)
    // by hand; the ranges their docs state are the table's.
    let types =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/typescript.rs"))
            .expect("read src/typescript.rs");
    let english = ts::grouped;
    let stated = |doc: &str, min: u64, max: u64| {
        let text = format!("{doc} ({} to {})", english(min), english(max));
        assert!(types.contains(&text), "typescript.rs should say \"{text}\"");
    };
    let (min, max) = integer_range(LIMITER, "maxInFlight").expect("maxInFlight's range");
    stated("Most calls running at once", min, max);
    let (min, max) = integer_range(LIMITER, "maxQueue").expect("maxQueue's range");
    stated("Most calls waiting for a slot", min, max);
    // With a queue, queueTimeoutMs must be at least 1 (a rule across keys).
    let (_, max) = integer_range(LIMITER, "queueTimeoutMs").expect("queueTimeoutMs' range");
    stated("Longest wait in the queue, in ms", 1, max);
    let edgeshed::options_schema::Kind::Integer { min, max } = SET_LIMIT.kind else {
        panic!("SET_LIMIT is not an integer");
    };
    let text = format!("an integer from {} to {}", english(min), english(max));
    assert!(
        types.contains(&text),
        "typescript.rs should say \"{text}\" for setLimit"
    );
}
