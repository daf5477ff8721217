//! JavaScript bindings (wasm32 only): the `Limiter` class of the npm package.
//!
//! A thin layer over [`Admission`](crate::admission::Admission): JavaScript
//! timers and time ([`JsClock`]), option validation, abort signals, the
//! contract's errors, and a `fetch` whose permit lives as long as its body.
//! Futures run on edgeshed's own executor ([`task`]), woken by JavaScript
//! promises and timers.

pub(crate) mod abort;
#[cfg(feature = "js")]
mod call;
mod clock;
#[cfg(feature = "js")]
mod counters;
#[cfg(feature = "js")]
mod errors;
pub(crate) mod fetch;
#[cfg(feature = "js")]
mod held;
mod id_map;
#[cfg(feature = "js")]
mod limiter;
#[cfg(feature = "js")]
mod options;
pub(crate) mod race;
pub(crate) mod settled;
pub(crate) mod task;
#[cfg(feature = "js")]
mod typescript;

pub use clock::{JsClock, JsSleep};
#[cfg(feature = "js")]
pub use limiter::Limiter;
