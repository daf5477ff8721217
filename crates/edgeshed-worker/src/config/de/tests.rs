//! Unit tests of the lenient leaf types.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::super::ranges::{Millis, Positive};
use super::{Flag, Int, Text};
use serde::de::value::{Error, F64Deserializer, I64Deserializer, StrDeserializer};
use serde::Deserialize;

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
