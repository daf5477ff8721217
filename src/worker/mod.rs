//! The edge worker: a fetch fan-out gateway that sheds with 503.
//!
//! The pure parts — configuration, path joining, metrics — are tested
//! natively (on wasm the configuration is built only with `worker`); the
//! HTTP handler (web-sys, wasm32 only) is built with the `worker` feature.

// Natively always (tests, fuzzing); on wasm only in the worker's build,
// which brings serde.
#[cfg(any(not(target_arch = "wasm32"), feature = "worker"))]
pub mod config;
pub mod metrics;
pub mod proxy_path;

#[cfg(all(target_arch = "wasm32", feature = "worker"))]
pub mod handler;
