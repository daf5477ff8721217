//! The edge worker: a fetch fan-out gateway that sheds with 503.
//!
//! The pure parts — configuration, path joining, metrics — compile and are
//! tested on every target; the HTTP handler (web-sys, wasm32 only) is built
//! with the `worker` feature.

pub mod config;
pub mod metrics;
pub mod proxy_path;

#[cfg(all(target_arch = "wasm32", feature = "worker"))]
pub mod handler;
