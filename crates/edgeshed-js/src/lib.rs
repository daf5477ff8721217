//! # edgeshed-js
//!
//! The npm package `edgeshed`: a `Limiter` class for JavaScript (Node.js,
//! workerd, browsers), built with wasm-pack by `scripts/build-pkg.sh`.
//!
//! A thin layer over [`Admission`](edgeshed::admission::Admission): option
//! validation, abort signals, the contract's errors, and a `fetch` whose
//! permit lives as long as its body, and an adaptive limit fed with every
//! call (`sampling.rs`). Futures run on
//! [edgeshed-wasm](edgeshed_wasm)'s executor.

mod bodies;
mod call;
mod counters;
mod criticality;
mod errors;
mod host;
mod lifecycle;
mod limiter;
mod options;
mod sampling;
mod stats;
mod typescript;

pub use limiter::Limiter;
