//! [`Section`]: an object read into a `#[derive(Deserialize)]` struct, its
//! unknown keys collected instead of ending the read.

use super::{skip_map, skip_seq, Scalar, Shape, Shaped};
use core::marker::PhantomData;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, IntoDeserializer};
use serde::de::{MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

/// Why a [`Section`] has no value.
#[derive(Debug)]
pub(in crate::config) enum Fault {
    /// It is not an object: the type found.
    NotObject(&'static str),
    /// The deserializer failed (what it said).
    Unreadable(String),
}

/// An object read into `T` (a `#[derive(Deserialize)]` struct with
/// `deny_unknown_fields`): its keys that `T` does not know are collected in
/// `unknown` and skipped, so the known ones are still read and checked.
pub(in crate::config) struct Section<T> {
    /// The struct, or why there is none.
    pub(in crate::config) value: Result<T, Fault>,
    /// Keys `T` does not have, in order.
    pub(in crate::config) unknown: Vec<String>,
    /// The keys `T` has (its serde field names).
    pub(in crate::config) known: &'static [&'static str],
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
