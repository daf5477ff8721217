//! `limiter.stats()`: the object's layout in one table ([`LAYOUT`]). Rust
//! writes the numbers in the table's order; glue.js's `statsObject` puts
//! each where the same table says, from the paths handed to it once per
//! instance (`statsLayout`). So no field is found by an offset written in two
//! files, and a field added here appears in the object (its TypeScript
//! declaration is checked against the table by the test below).

use crate::host::{stats_layout, stats_object};
use edgeshed::admission::{Criticality, CriticalityStats, RefusedKey, Reserve, Stats};
use edgeshed::Key;
use wasm_bindgen::JsValue;

/// What the numbers of one `stats()` are read from.
pub(crate) struct Sources<'a> {
    /// The core's counters.
    pub(crate) stats: &'a Stats,
    /// Deadlines passed, queued (the core's) and running (the JS face's).
    pub(crate) expired: u64,
    /// Calls whose caller was rejected while their work ran.
    pub(crate) abandoned: u64,
    /// Slots held by `fetch` bodies now.
    pub(crate) held_bodies: f64,
    /// `fetch` bodies cut after `bodyTimeoutMs`.
    pub(crate) body_timeouts: f64,
    /// The keys refused most often, most first.
    pub(crate) top_refused: &'a [RefusedKey],
    /// The reserve in force (`Reserve::NONE` until a call names its
    /// criticality, unless `options.reserve` was given).
    pub(crate) reserve: Reserve,
}

/// A number of the stats object.
type Number = fn(&Sources<'_>) -> f64;
/// A number of each criticality's object.
type PerCriticality = fn(&CriticalityStats) -> f64;
/// One number per criticality.
type OfCriticality = fn(&Sources<'_>, Criticality) -> f64;

/// One entry of the stats object, in the object's order.
enum Entry {
    /// A number.
    Number(&'static str, Number),
    /// One object per criticality (by name, in `Criticality::ALL` order),
    /// each with these numbers.
    ByCriticality(&'static str, &'static [(&'static str, PerCriticality)]),
    /// `{ critical, default, sheddable }`: one number per criticality.
    PerCriticality(&'static str, OfCriticality),
    /// An object of these numbers, or `null` when the test says it is absent
    /// (its presence, 1 or 0, goes before its numbers).
    Nullable(
        &'static str,
        fn(&Sources<'_>) -> bool,
        &'static [(&'static str, Number)],
    ),
    /// `[{ key, refused, overcount }]`: the keys refused most often, `key`
    /// their first bytes ([`Key::shown`]) or `null` for the calls without one.
    RefusedKeys(&'static str),
}

/// The stats object, field by field.
const LAYOUT: &[Entry] = &[
    Entry::Number("inFlight", |s| s.stats.in_flight as f64),
    Entry::Number("queued", |s| s.stats.queued as f64),
    Entry::Number("admitted", |s| s.stats.admitted as f64),
    Entry::Number("shed", |s| s.stats.shed as f64),
    Entry::Number("queueTimeouts", |s| s.stats.queue_timeouts as f64),
    Entry::Number("expired", |s| s.expired as f64),
    Entry::Number("abandoned", |s| s.abandoned as f64),
    Entry::Number("heldBodies", |s| s.held_bodies),
    Entry::Number("bodyTimeouts", |s| s.body_timeouts),
    Entry::Number("limit", |s| s.stats.limit as f64),
    // The reserve in force, or `null` for none (every call may use the
    // whole limit), and what each criticality may hold of the limit now.
    Entry::Nullable(
        "reserve",
        |s| s.reserve != Reserve::NONE,
        &[
            ("critical", |s| s.reserve.critical()),
            ("default", |s| s.reserve.default_share()),
        ],
    ),
    Entry::PerCriticality("ceilings", |s, criticality| {
        s.reserve.ceiling(s.stats.limit, criticality) as f64
    }),
    Entry::ByCriticality(
        "byCriticality",
        &[
            ("admitted", |c| c.admitted as f64),
            ("shed", |c| c.shed as f64),
            ("displaced", |c| c.displaced as f64),
            ("inFlight", |c| c.in_flight as f64),
            ("queued", |c| c.queued as f64),
            // A boolean ("!"): whether its reserve is lent to it now.
            ("lent!", |c| f64::from(u8::from(c.lent))),
        ],
    ),
    Entry::Number("fairShareRefused", |s| s.stats.fair_share_refused as f64),
    Entry::Number("rateLimited", |s| s.stats.rate_limited as f64),
    Entry::Number("rateOverflow", |s| s.stats.rate_overflow as f64),
    Entry::RefusedKeys("topRefusedKeys"),
];

/// The table as `statsLayout` reads it: one path per number, separated by
/// spaces (`byCriticality.critical.admitted`); a list of refused keys is its
/// name and `[]`.
fn layout_text() -> String {
    // Pushed piece by piece: `format!` here cost 0.8 KiB of the package's
    // gzipped wasm (measured with scripts/build-pkg.sh).
    fn path(text: &mut String, parts: &[&str]) {
        if !text.is_empty() {
            text.push(' ');
        }
        for (at, part) in parts.iter().enumerate() {
            if at > 0 {
                text.push('.');
            }
            text.push_str(part);
        }
    }
    let mut text = String::new();
    for entry in LAYOUT {
        match entry {
            Entry::Number(name, _) => path(&mut text, &[name]),
            Entry::ByCriticality(name, fields) => {
                for criticality in edgeshed::admission::Criticality::ALL {
                    for (field, _) in *fields {
                        path(&mut text, &[name, criticality.as_str(), field]);
                    }
                }
            }
            Entry::PerCriticality(name, _) => {
                for criticality in edgeshed::admission::Criticality::ALL {
                    path(&mut text, &[name, criticality.as_str()]);
                }
            }
            Entry::Nullable(name, _, fields) => {
                path(&mut text, &[name]);
                text.push('?');
                for (field, _) in *fields {
                    path(&mut text, &[name, field]);
                }
            }
            Entry::RefusedKeys(name) => {
                path(&mut text, &[name]);
                text.push_str("[]");
            }
        }
    }
    text
}

/// The numbers of `sources` in the table's order; a list of refused keys is
/// its length, then each key's `refused` and `overcount`.
fn values(sources: &Sources<'_>) -> Vec<f64> {
    let mut values = Vec::with_capacity(64);
    for entry in LAYOUT {
        match entry {
            Entry::Number(_, read) => values.push(read(sources)),
            Entry::ByCriticality(_, fields) => {
                for criticality in edgeshed::admission::Criticality::ALL {
                    let class = sources.stats.by_criticality.get(criticality);
                    values.extend(fields.iter().map(|(_, read)| read(class)));
                }
            }
            Entry::PerCriticality(_, read) => {
                values.extend(Criticality::ALL.map(|criticality| read(sources, criticality)));
            }
            Entry::Nullable(_, present, fields) => {
                values.push(f64::from(u8::from(present(sources))));
                values.extend(fields.iter().map(|(_, read)| read(sources)));
            }
            Entry::RefusedKeys(_) => {
                values.push(sources.top_refused.len() as f64);
                for refused in sources.top_refused {
                    values.extend([refused.refused as f64, refused.overcount as f64]);
                }
            }
        }
    }
    values
}

thread_local! {
    /// The table's paths, parsed once by glue.js.
    static LAYOUT_JS: JsValue = stats_layout(&layout_text());
}

/// The `stats()` object of `sources`: one crossing for the numbers, one
/// string per refused key.
pub(crate) fn stats_js(sources: &Sources<'_>) -> JsValue {
    let keys = js_sys::Array::new();
    for refused in sources.top_refused {
        keys.push(&refused.key.as_ref().map_or(JsValue::NULL, shown));
    }
    let values = values(sources);
    LAYOUT_JS.with(|layout| stats_object(layout, &values, &keys))
}

/// A key as stats show it: its first bytes, never the whole value.
fn shown(key: &Key) -> JsValue {
    JsValue::from_str(key.shown())
}

#[cfg(test)]
#[path = "stats_tests.rs"]
mod tests;
