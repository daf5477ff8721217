//! A JSON-like value: what the `EDGESHED` binding is read into before it is
//! validated. Kept free of any JavaScript type so validation is pure Rust,
//! testable natively and fuzzable.

/// A JSON value. Objects keep their keys in order (duplicates impossible in
/// JSON from JavaScript, and harmless here: the first one wins).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `null` (and `undefined` from JavaScript).
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// Any number.
    Number(f64),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object, as its entries.
    Object(Vec<(String, Value)>),
}

impl Value {
    /// A short description of the value's type for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }

    /// The entry `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}
