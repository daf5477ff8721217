//! Renders the core's options table as `src/options.d.ts`: the per-key
//! interfaces and unions of the npm package's types, each key's doc with
//! its range and default. `typescript.rs` adds the structural types (a
//! fixed or an adaptive limit, no queue or a bounded one, the `Limiter`).

use edgeshed::options_schema::{find, Fallback, Kind, OptionSpec, CALL, LIMITER};
use std::fmt::Write;

/// The whole file.
pub fn render() -> String {
    let mut out = String::from(
        "// The npm package's option types, rendered from the core's options table\n\
         // (src/options_schema.rs) by crates/edgeshed-js/tests/options_schema/main.rs: do not edit.\n\
         // After a change to the table: EDGESHED_BLESS=1 cargo test -p edgeshed-js --test options_schema\n",
    );
    union(&mut out, CALL, "criticality");
    for path in ["queueDiscipline", "maxQueueWait", "adaptive.algorithm"] {
        union(&mut out, LIMITER, path);
    }
    for path in ["reserve", "adaptive"] {
        let spec = find(LIMITER, path).expect("a section");
        let Kind::Section { name, keys, doc } = spec.kind else {
            panic!("{path} is not a section")
        };
        interface(&mut out, name, doc, "", keys.iter().collect());
    }
    rate(&mut out);
    let structural = ["maxInFlight", "adaptive", "maxQueue", "queueTimeoutMs"];
    let policy = LIMITER
        .iter()
        .filter(|spec| !structural.contains(&spec.key))
        .collect();
    let doc = "The options of `new Limiter(options)` besides its limit and its queue. All counts and times are integers.";
    interface(&mut out, "LimiterPolicyOptions", doc, "", policy);
    let class = ["criticality", "key", "fairWeight"];
    let doc = "How a call is treated under overload: its `criticality` (its reserve, its place in the queue, whom it may displace), its `key` (its flow in fair queueing, its fair share and its rate limit) and its key's `fairWeight`.";
    interface(
        &mut out,
        "CallClass",
        doc,
        "",
        CALL.iter().filter(|s| class.contains(&s.key)).collect(),
    );
    let rest = CALL.iter().filter(|s| !class.contains(&s.key)).collect();
    interface(
        &mut out,
        "RunOptions",
        "Per-call options of `Limiter.run`.",
        " extends CallClass",
        rest,
    );
    out
}

/// `export type Name = "a" | "b";` for the `OneOf` at `path`.
fn union(out: &mut String, table: &'static [OptionSpec], path: &str) {
    let spec = find(table, path).expect("a key of the table");
    let Kind::OneOf { name, values, doc } = spec.kind else {
        panic!("{path} is not a OneOf")
    };
    let values: Vec<String> = values.iter().map(|v| format!("\"{v}\"")).collect();
    out.push('\n');
    comment(out, "", doc);
    writeln!(out, "export type {name} = {};", values.join(" | ")).unwrap();
}

fn interface(out: &mut String, name: &str, doc: &str, extends: &str, keys: Vec<&OptionSpec>) {
    out.push('\n');
    comment(out, "", doc);
    writeln!(out, "export interface {name}{extends} {{").unwrap();
    for spec in keys {
        field(out, spec, "  ");
    }
    out.push_str("}\n");
}

/// `RateOptions`: exactly one of `perSecond` and `perMinute`, and the other keys.
fn rate(out: &mut String) {
    let spec = find(LIMITER, "rate").expect("rate");
    let Kind::Section { name, keys, doc } = spec.kind else {
        panic!("rate is not a section")
    };
    let (one, other) = ("perSecond", "perMinute");
    out.push('\n');
    comment(out, "", doc);
    writeln!(out, "export type {name} = (").unwrap();
    for (given, left) in [(one, other), (other, one)] {
        let spec = keys
            .iter()
            .find(|spec| spec.key == given)
            .expect("a rate key");
        out.push_str("  | {\n");
        comment(out, "      ", &describe(spec));
        writeln!(
            out,
            "      {given}: number;\n      {left}?: undefined;\n    }}"
        )
        .unwrap();
    }
    out.push_str(") & {\n");
    for spec in keys
        .iter()
        .filter(|spec| spec.key != one && spec.key != other)
    {
        field(out, spec, "  ");
    }
    out.push_str("};\n");
}

fn field(out: &mut String, spec: &OptionSpec, indent: &str) {
    comment(out, indent, &describe(spec));
    let ty = match spec.kind {
        Kind::Integer { .. } | Kind::Fraction => "number",
        Kind::OneOf { name, .. } | Kind::Section { name, .. } => name,
        Kind::Text(_) => "string",
        Kind::Signal => "AbortSignal",
    };
    match spec.default {
        Fallback::Required => writeln!(out, "{indent}{}: {ty};", spec.key),
        _ => writeln!(out, "{indent}{}?: {ty} | undefined;", spec.key),
    }
    .unwrap();
}

/// The key's doc with its range and default: `Doc (1 to 64; default 6).`
fn describe(spec: &OptionSpec) -> String {
    let mut facts = Vec::new();
    match spec.kind {
        Kind::Integer { min, max } => facts.push(format!("{} to {}", grouped(min), grouped(max))),
        Kind::Fraction => facts.push("0 to 1".to_string()),
        _ => {}
    }
    match spec.default {
        Fallback::Integer(n) => facts.push(format!("default {}", grouped(n))),
        Fallback::Fraction(f) => facts.push(format!("default {f}")),
        Fallback::Name(name) => facts.push(format!("default `\"{name}\"`")),
        Fallback::Within(n) => {
            facts.push(format!("default {n}, moved into `[minLimit, maxLimit]`"))
        }
        Fallback::Described(text) => facts.push(format!("default {text}")),
        Fallback::Required | Fallback::Absent => {}
    }
    let facts = facts.join("; ");
    match spec.doc.strip_suffix(')') {
        _ if facts.is_empty() => format!("{}.", spec.doc),
        Some(open) => format!("{open}; {facts})."),
        None => format!("{} ({facts}).", spec.doc),
    }
}

/// 1000000 as `1,000,000`.
pub(crate) fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (at, digit) in digits.chars().enumerate() {
        if at > 0 && (digits.len() - at) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// A JSDoc comment: one line when it fits in 100 columns, else wrapped.
fn comment(out: &mut String, indent: &str, text: &str) {
    if indent.len() + text.len() + 7 <= 100 {
        writeln!(out, "{indent}/** {text} */").unwrap();
        return;
    }
    writeln!(out, "{indent}/**").unwrap();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && indent.len() + 3 + line.len() + 1 + word.chars().count() > 100 {
            writeln!(out, "{indent} * {line}").unwrap();
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    writeln!(out, "{indent} * {line}\n{indent} */").unwrap();
}
