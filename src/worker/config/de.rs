//! The serde pieces the configuration is read with. None of them fails on a
//! value of the wrong type: each records what it found instead, so that the
//! checks (`check.rs`) report every error of a configuration at once, each
//! naming its key. Unknown keys are collected the same way.
//!
//! They expect a deserializer that hands out self-contained values (a
//! `JsValue` through serde-wasm-bindgen, a `serde_json::Value`): a part that
//! could not be read is skipped, and the rest is still read.

use core::fmt;
use core::marker::PhantomData;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, IntoDeserializer};
use serde::de::{MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

/// What a key held: a boolean, a number, a string, or the kind of anything
/// else (`"null"`, `"an array"`, `"an object"`).
enum Scalar {
    Bool(bool),
    Number(f64),
    Text(String),
    Kind(&'static str),
}

impl Scalar {
    /// The value's type, for error messages.
    fn kind(&self) -> &'static str {
        match self {
            Scalar::Bool(_) => "a boolean",
            Scalar::Number(_) => "a number",
            Scalar::Text(_) => "a string",
            Scalar::Kind(kind) => kind,
        }
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(Shaped::<Scalar>(PhantomData))
    }
}

/// A value whose type is seen by the visitor of [`Shaped`]: scalars are
/// handed over, containers are read (or skipped) by the type itself.
trait Shape<'de>: Sized {
    /// A scalar (or `null`) was found.
    fn scalar(found: Scalar) -> Self;
    /// An object was found; the default skips it.
    fn map<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        skip_map(map)?;
        Ok(Self::scalar(Scalar::Kind("an object")))
    }
    /// An array was found; the default skips it.
    fn seq<A: SeqAccess<'de>>(seq: A) -> Result<Self, A::Error> {
        skip_seq(seq)?;
        Ok(Self::scalar(Scalar::Kind("an array")))
    }
}

impl Shape<'_> for Scalar {
    fn scalar(found: Scalar) -> Self {
        found
    }
}

fn skip_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

fn skip_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

/// The visitor of every type here: accepts any value.
struct Shaped<T>(PhantomData<T>);

impl<'de, T: Shape<'de>> Visitor<'de> for Shaped<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<T, E> {
        Ok(T::scalar(Scalar::Bool(v)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        Ok(T::scalar(Scalar::Number(v as f64)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        Ok(T::scalar(Scalar::Number(v as f64)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        Ok(T::scalar(Scalar::Number(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        Ok(T::scalar(Scalar::Text(v.to_string())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<T, E> {
        Ok(T::scalar(Scalar::Text(v)))
    }
    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<T, E> {
        Ok(T::scalar(Scalar::Kind("bytes")))
    }
    fn visit_unit<E: de::Error>(self) -> Result<T, E> {
        Ok(T::scalar(Scalar::Kind("null")))
    }
    fn visit_none<E: de::Error>(self) -> Result<T, E> {
        Ok(T::scalar(Scalar::Kind("null")))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::map(map)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        T::seq(seq)
    }
}

/// Implements [`Deserialize`] through [`Shaped`] for a [`Shape`].
macro_rules! deserialize_shaped {
    ($([$($generics:tt)*] $name:ty),*) => {$(
        impl<'de, $($generics)*> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer.deserialize_any(Shaped::<Self>(PhantomData))
            }
        }
    )*};
}

/// A string, or the type found instead.
pub(super) struct Text(pub(super) Result<String, &'static str>);

impl Shape<'_> for Text {
    fn scalar(found: Scalar) -> Self {
        Text(match found {
            Scalar::Text(text) => Ok(text),
            other => Err(other.kind()),
        })
    }
}

/// A boolean, or the type found instead.
pub(super) struct Flag(pub(super) Result<bool, &'static str>);

impl Shape<'_> for Flag {
    fn scalar(found: Scalar) -> Self {
        Flag(match found {
            Scalar::Bool(flag) => Ok(flag),
            other => Err(other.kind()),
        })
    }
}

/// The accepted integers of an [`Int`] and how an error message names them.
pub(super) trait Range {
    /// Smallest accepted value.
    const MIN: f64;
    /// Largest accepted value.
    const MAX: f64;
    /// What is accepted, as in "must be a positive integer".
    const WHAT: &'static str;
}

/// An integer in `R`, or what is wrong with the value found:
/// `"must be a positive integer, got 1.5"` (the key is added by the checks).
pub(super) struct Int<R>(pub(super) Result<u64, String>, pub(super) PhantomData<R>);

impl<R: Range> Shape<'_> for Int<R> {
    fn scalar(found: Scalar) -> Self {
        let checked = match found {
            Scalar::Number(n)
                if n.is_finite() && n.fract() == 0.0 && n >= R::MIN && n <= R::MAX =>
            {
                Ok(n as u64)
            }
            Scalar::Number(n) => Err(format!("must be {}, got {}", R::WHAT, describe_number(n))),
            other => Err(format!("must be {}, got {}", R::WHAT, other.kind())),
        };
        Int(checked, PhantomData)
    }
}

/// A number for an error message, as JavaScript would print it for the
/// usual values (`1.5`, `-2`, `NaN`); huge values are not spelled out.
fn describe_number(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if n.abs() >= 1e15 {
        return "a number too large".into();
    }
    if n == 0.0 {
        return "0".into(); // -0 too
    }
    format!("{n}")
}

/// An array of `T`, or the type found instead.
pub(super) struct List<T>(pub(super) Result<Vec<T>, &'static str>);

impl<'de, T: Deserialize<'de>> Shape<'de> for List<T> {
    fn scalar(found: Scalar) -> Self {
        List(Err(found.kind()))
    }
    fn seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(List(Ok(items)))
    }
}

/// An object read as its entries in order (the origins by name), or the
/// type found instead.
pub(super) struct Entries<T>(pub(super) Result<Vec<(String, T)>, &'static str>);

impl<'de, T: Deserialize<'de>> Shape<'de> for Entries<T> {
    fn scalar(found: Scalar) -> Self {
        Entries(Err(found.kind()))
    }
    fn map<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(Entries(Ok(entries)))
    }
}

deserialize_shaped!([] Text, [] Flag, [R: Range] Int<R>, [T: Deserialize<'de>] List<T>, [T: Deserialize<'de>] Entries<T>);

/// Why a [`Section`] has no value.
#[derive(Debug)]
pub(super) enum Fault {
    /// It is not an object: the type found.
    NotObject(&'static str),
    /// The deserializer failed (what it said).
    Unreadable(String),
}

/// An object read into `T` (a `#[derive(Deserialize)]` struct with
/// `deny_unknown_fields`): its keys that `T` does not know are collected in
/// `unknown` and skipped, so the known ones are still read and checked.
pub(super) struct Section<T> {
    /// The struct, or why there is none.
    pub(super) value: Result<T, Fault>,
    /// Keys `T` does not have, in order.
    pub(super) unknown: Vec<String>,
    /// The keys `T` has (its serde field names).
    pub(super) known: &'static [&'static str],
}

impl<'de, T: Deserialize<'de>> Shape<'de> for Section<T> {
    fn scalar(found: Scalar) -> Self {
        Section {
            value: Err(Fault::NotObject(found.kind())),
            unknown: Vec::new(),
            known: &[],
        }
    }
    fn seq<A: SeqAccess<'de>>(seq: A) -> Result<Self, A::Error> {
        skip_seq(seq)?;
        Ok(Self::scalar(Scalar::Kind("an array")))
    }
    fn map<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut fields = Fields {
            map: &mut map,
            known: &[],
            unknown: Vec::new(),
        };
        let value = T::deserialize(&mut fields);
        let (known, unknown) = (fields.known, fields.unknown);
        let value = match value {
            Ok(value) => Ok(value),
            Err(error) => {
                // Skip what is left, so the enclosing object reads on.
                skip_map(map)?;
                Err(Fault::Unreadable(error.to_string()))
            }
        };
        Ok(Section {
            value,
            unknown,
            known,
        })
    }
}

deserialize_shaped!([T: Deserialize<'de>] Section<T>);

/// The entries of an object as `T`'s derive sees them: only the keys it
/// names in `deserialize_struct`; the others are recorded and skipped.
struct Fields<'m, A> {
    map: &'m mut A,
    known: &'static [&'static str],
    unknown: Vec<String>,
}

impl<'de, A: MapAccess<'de>> Deserializer<'de> for &mut Fields<'_, A> {
    type Error = A::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, A::Error> {
        visitor.visit_map(self)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        self.known = fields;
        visitor.visit_map(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for &mut Fields<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        while let Some(key) = self.map.next_key::<String>()? {
            if self.known.contains(&key.as_str()) {
                return seed.deserialize(key.into_deserializer()).map(Some);
            }
            self.map.next_value::<IgnoredAny>()?;
            self.unknown.push(key);
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::super::raw::{Millis, Positive};
    use super::*;
    use serde::de::value::{Error, F64Deserializer, I64Deserializer, StrDeserializer};

    fn positive(n: f64) -> Result<u64, String> {
        Int::<Positive>::deserialize(F64Deserializer::<Error>::new(n))
            .unwrap()
            .0
    }

    /// What JavaScript can hold and JSON cannot (NaN, Infinity) is judged by
    /// the same code as everything else, whichever deserializer hands it over.
    #[test]
    fn bounded_integers_name_what_they_got() {
        assert_eq!(positive(6.0), Ok(6));
        assert_eq!(positive(1_000_000.0), Ok(1_000_000));
        let what = "must be a positive integer, got";
        for (n, got) in [
            (1.5, "1.5"),
            (0.0, "0"),
            (-0.0, "0"),
            (-3.0, "-3"),
            (1_000_001.0, "1000001"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (1e308, "a number too large"),
        ] {
            assert_eq!(positive(n), Err(format!("{what} {got}")), "{n}");
        }
        let text = Int::<Millis>::deserialize(StrDeserializer::<Error>::new("20")).unwrap();
        assert_eq!(
            text.0,
            Err("must be a positive integer (milliseconds), got a string".into())
        );
        let int = Int::<Millis>::deserialize(I64Deserializer::<Error>::new(20)).unwrap();
        assert_eq!(int.0, Ok(20));
    }

    #[test]
    fn strings_and_flags_name_the_type_they_got() {
        let flag = Flag::deserialize(StrDeserializer::<Error>::new("yes")).unwrap();
        assert_eq!(flag.0, Err("a string"));
        let text = Text::deserialize(F64Deserializer::<Error>::new(5.0)).unwrap();
        assert_eq!(text.0, Err("a number"));
    }
}
