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
use serde::de::{self, Deserializer, IgnoredAny};
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

/// A number from 0 to 1 (a fraction of a limit: `reserve.critical`), or
/// what is wrong with the value found.
pub(super) struct Fraction(pub(super) Result<f64, String>);

impl Shape<'_> for Fraction {
    fn scalar(found: Scalar) -> Self {
        Fraction(match found {
            Scalar::Number(n) if (0.0..=1.0).contains(&n) => Ok(n),
            Scalar::Number(n) => Err(format!(
                "must be a number from 0 to 1, got {}",
                describe_number(n)
            )),
            other => Err(format!(
                "must be a number from 0 to 1, got {}",
                other.kind()
            )),
        })
    }
}

deserialize_shaped!([] Fraction, [] Text, [] Flag, [R: Range] Int<R>, [T: Deserialize<'de>] List<T>, [T: Deserialize<'de>] Entries<T>);

mod section;
pub(super) use section::{Fault, Section};

#[cfg(test)]
mod tests;
