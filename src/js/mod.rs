//! JavaScript bindings (wasm32 only): the `Limiter` class of the npm package.
//!
//! A thin layer over [`Admission`](crate::admission::Admission): JavaScript
//! timers and time ([`JsClock`]), option validation, abort signals, the
//! contract's errors, and a `fetch` whose permit lives as long as its body.
//! Futures run on wasm-bindgen-futures, woken by JavaScript promises.

mod abort;
mod clock;
mod errors;
mod fetch;
mod limiter;
mod options;
mod race;

pub use clock::{JsClock, JsSleep};
pub use limiter::Limiter;
