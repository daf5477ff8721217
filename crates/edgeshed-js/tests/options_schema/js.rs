//! Renders the core's options table as `src/options-schema.js`: plain data
//! (kinds, ranges, defaults, names) for the generic walker in `options.js`.

use edgeshed::options_schema::{Fallback, Kind, OptionSpec, CALL, LIMITER, SET_LIMIT};
use std::fmt::Write;

/// The whole file.
pub fn render() -> String {
    let mut out = String::from(
        "// The npm package's options as data, rendered from the core's options table\n\
         // (src/options_schema.rs) by crates/edgeshed-js/tests/options_schema/main.rs: do not edit.\n\
         // After a change to the table: EDGESHED_BLESS=1 cargo test -p edgeshed-js --test options_schema\n\
         // Each key: its kind (\"integer\" min..max, \"fraction\" 0..1, \"oneOf\" values, \"section\"\n\
         // keys, \"string\" what, \"signal\"), its default if any, `required`, and `within` (a\n\
         // default moved into the section's [minLimit, maxLimit]).\n",
    );
    let tables: [(&str, &str, &[OptionSpec]); 2] = [
        ("LIMITER", "`new Limiter(options)`.", LIMITER),
        (
            "CALL",
            "`run(fn, options)`, and the edgeshed keys of `fetch`'s `init`.",
            CALL,
        ),
    ];
    for (name, doc, table) in tables {
        writeln!(out, "\n/** {doc} */\nexport const {name} = {{").unwrap();
        keys(&mut out, table, 1);
        out.push_str("};\n");
    }
    writeln!(out, "\n/** `setLimit(limit)`'s argument. */").unwrap();
    writeln!(out, "export const SET_LIMIT = {};", spec(&SET_LIMIT, 0)).unwrap();
    out
}

fn keys(out: &mut String, table: &[OptionSpec], depth: usize) {
    let indent = "  ".repeat(depth);
    for option in table {
        writeln!(out, "{indent}{}: {},", option.key, spec(option, depth)).unwrap();
    }
}

/// One key's object literal (nested sections over several lines).
fn spec(option: &OptionSpec, depth: usize) -> String {
    let mut fields = match option.kind {
        Kind::Integer { min, max } => format!(r#"kind: "integer", min: {min}, max: {max}"#),
        Kind::Fraction => r#"kind: "fraction""#.to_string(),
        Kind::OneOf { values, .. } => format!(r#"kind: "oneOf", values: [{}]"#, quoted(values)),
        Kind::Text(what) => format!(r#"kind: "string", what: {}"#, string(what)),
        Kind::Signal => r#"kind: "signal""#.to_string(),
        Kind::Section { keys: inner, .. } => {
            let indent = "  ".repeat(depth);
            let mut text = format!("{{\n{indent}  kind: \"section\",\n{indent}  keys: {{\n");
            keys(&mut text, inner, depth + 2);
            write!(text, "{indent}  }},\n{indent}}}").unwrap();
            return text;
        }
    };
    match option.default {
        Fallback::Required => fields.push_str(", required: true"),
        Fallback::Integer(n) => write!(fields, ", default: {n}").unwrap(),
        Fallback::Fraction(f) => write!(fields, ", default: {f}").unwrap(),
        Fallback::Name(name) => write!(fields, ", default: {}", string(name)).unwrap(),
        Fallback::Within(n) => write!(fields, ", within: {n}").unwrap(),
        Fallback::Absent | Fallback::Described(_) => {}
    }
    format!("{{ {fields} }}")
}

fn string(text: &str) -> String {
    format!("\"{}\"", text.escape_default())
}

fn quoted(values: &[&str]) -> String {
    values
        .iter()
        .map(|value| string(value))
        .collect::<Vec<_>>()
        .join(", ")
}
