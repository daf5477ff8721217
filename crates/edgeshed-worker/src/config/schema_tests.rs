//! The configuration's sections read the keys of the core's options table
//! ([`edgeshed::options_schema`], what the npm package validates by) where
//! the two faces share them, with the same ranges and defaults: each
//! section's serde keys are exactly the table's plus the worker's own.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::adaptive::RawAdaptive;
use super::classes::{RateCount, RawRateLimit};
use super::de::{Range, Section};
use super::fairness::Weight;
use super::queueing::RawReserve;
use super::ranges::{Millis, NonNegative, Positive};
use super::raw::{RawLimit, RawOrigin};
use edgeshed::admission::{QueueDiscipline, Reserve};
use edgeshed::limit::adaptive::{AnyLimit, Bounds};
use edgeshed::options_schema::{
    find, integer_range, section_keys, Fallback, Kind, OptionSpec, ADAPTIVE, CALL, LIMITER, RATE,
    RESERVE,
};
use edgeshed::rate_limit::Rate;
use serde::de::{self, Deserialize, Deserializer, Visitor};
use std::cell::Cell;
use std::collections::BTreeSet;

/// A deserializer that only records the keys a derived struct asks for
/// (serde's `FIELDS`, renamed as the JSON spells them).
struct FieldsProbe(Cell<&'static [&'static str]>);

impl<'de> Deserializer<'de> for &FieldsProbe {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.set(fields);
        Err(de::Error::custom("fields recorded"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map
        enum identifier ignored_any
    }
}

/// The JSON keys of the derived struct `T`.
fn serde_keys<T: for<'de> Deserialize<'de>>() -> BTreeSet<&'static str> {
    let probe = FieldsProbe(Cell::new(&[]));
    assert!(T::deserialize(&probe).is_err());
    probe.0.get().iter().copied().collect()
}

/// The table's keys, without `except`, with the worker's own `extra`.
fn keys(table: &[OptionSpec], except: &[&str], extra: &[&'static str]) -> BTreeSet<&'static str> {
    let shared = table
        .iter()
        .map(|spec| spec.key)
        .filter(|key| !except.contains(key));
    shared.chain(extra.iter().copied()).collect()
}

/// A section read from JSON: each table key accepted, an unknown one refused.
fn accepts_exactly<T: for<'de> Deserialize<'de>>(table: &[OptionSpec], extra: &[&str]) {
    let mut object = serde_json::Map::new();
    for key in table
        .iter()
        .map(|spec| spec.key)
        .chain(extra.iter().copied())
    {
        object.insert(key.to_string(), serde_json::Value::from(1));
    }
    let section = Section::<T>::deserialize(&serde_json::Value::Object(object.clone())).unwrap();
    assert!(section.unknown.is_empty(), "refused: {:?}", section.unknown);
    object.insert("maxinflight".into(), serde_json::Value::from(1));
    let section = Section::<T>::deserialize(&serde_json::Value::Object(object)).unwrap();
    assert_eq!(section.unknown, ["maxinflight"]);
}

#[test]
fn sections_have_exactly_the_tables_keys_and_the_workers_own() {
    assert_eq!(serde_keys::<RawAdaptive>(), keys(ADAPTIVE, &[], &[]));
    assert_eq!(serde_keys::<RawReserve>(), keys(RESERVE, &[], &[]));
    let binding = ["key", "binding", "periodSeconds"];
    assert_eq!(serde_keys::<RawRateLimit>(), keys(RATE, &[], &binding));
    // The npm package's own: `bodyTimeoutMs` (its fetch bodies) and `rate`
    // (the worker's is a route's `rateLimit`); `global` has no adaptive limit.
    let js_only = ["bodyTimeoutMs", "rate"];
    let global = keys(LIMITER, &[js_only[0], js_only[1], "adaptive"], &[]);
    assert_eq!(serde_keys::<RawLimit>(), global);
    let origin = ["url", "timeoutMs", "maxBodyBytes", "budget"];
    assert_eq!(serde_keys::<RawOrigin>(), keys(LIMITER, &js_only, &origin));
}

#[test]
fn sections_read_from_json_accept_the_tables_keys_and_refuse_others() {
    accepts_exactly::<RawAdaptive>(ADAPTIVE, &[]);
    accepts_exactly::<RawReserve>(RESERVE, &[]);
    accepts_exactly::<RawRateLimit>(RATE, &[]);
    let shared: Vec<OptionSpec> = LIMITER
        .iter()
        .filter(|spec| !["bodyTimeoutMs", "rate", "adaptive"].contains(&spec.key))
        .copied()
        .collect();
    accepts_exactly::<RawLimit>(&shared, &[]);
    accepts_exactly::<RawOrigin>(&shared, &["adaptive"]);
}

fn range<R: Range>() -> Option<(u64, u64)> {
    Some((R::MIN as u64, R::MAX as u64))
}

#[test]
fn ranges_are_the_tables() {
    let counts = ["maxInFlight", "adaptive.initialLimit", "adaptive.minLimit"];
    for path in counts
        .into_iter()
        .chain(["adaptive.maxLimit", "rate.maxKeys"])
    {
        assert_eq!(range::<Positive>(), integer_range(LIMITER, path), "{path}");
    }
    assert_eq!(range::<NonNegative>(), integer_range(LIMITER, "maxQueue"));
    for path in ["queueTimeoutMs", "codelTargetMs"] {
        assert_eq!(range::<Millis>(), integer_range(LIMITER, path), "{path}");
    }
    for path in ["rate.perSecond", "rate.perMinute", "rate.burst"] {
        assert_eq!(range::<RateCount>(), integer_range(LIMITER, path), "{path}");
    }
    // `fairness.weights` takes what a call's `fairWeight` takes.
    assert_eq!(range::<Weight>(), integer_range(CALL, "fairWeight"));
}

#[test]
fn defaults_and_names_are_the_tables() {
    let default = |path| find(LIMITER, path).unwrap().default;
    let reserve = Reserve::default();
    assert_eq!(
        default("reserve.critical"),
        Fallback::Fraction(reserve.critical())
    );
    assert_eq!(
        default("reserve.default"),
        Fallback::Fraction(reserve.default_share())
    );
    let codel = QueueDiscipline::DEFAULT_CODEL_TARGET.as_millis() as u64;
    assert_eq!(default("codelTargetMs"), Fallback::Integer(codel));
    let edge = Bounds::EDGE;
    assert_eq!(
        default("adaptive.initialLimit"),
        Fallback::Within(edge.initial() as u64)
    );
    assert_eq!(
        default("adaptive.minLimit"),
        Fallback::Integer(edge.min() as u64)
    );
    assert_eq!(
        default("adaptive.maxLimit"),
        Fallback::Integer(edge.max() as u64)
    );
    let max_keys = Rate::DEFAULT_MAX_KEYS as u64;
    assert_eq!(default("rate.maxKeys"), Fallback::Integer(max_keys));
    let Some(Kind::OneOf { values, .. }) = find(LIMITER, "adaptive.algorithm").map(|s| s.kind)
    else {
        panic!("adaptive.algorithm is not a OneOf");
    };
    assert_eq!(values, AnyLimit::NAMES);
    assert_eq!(section_keys(LIMITER, "reserve"), Some(RESERVE));
}
