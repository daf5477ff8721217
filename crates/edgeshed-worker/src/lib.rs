//! # edgeshed-worker
//!
//! The edgeshed gateway: a fetch fan-out gateway for workerd that throttles
//! calls to origins and answers 503 + `Retry-After` on overload, built with
//! wasm-pack by `scripts/build-worker.sh` and started by `worker/index.mjs`.
//!
//! The pure parts — configuration and its checker's report, path joining, metrics, the failure →
//! status table, the fan-out's admission order, a request's criticality and
//! key, the rate-limit headers — compile and are
//! tested on every target; the HTTP handler (web-sys, on
//! [edgeshed-wasm](https://docs.rs/edgeshed-wasm)'s executor) is wasm32 only.

pub mod budget;
#[cfg(target_arch = "wasm32")]
pub mod budget_object;
pub mod check;
pub mod classify;
pub mod config;
pub mod failure;
pub mod fanout_admission;
pub mod metrics;
pub mod proxy_path;
pub mod rate_headers;

#[cfg(target_arch = "wasm32")]
pub mod handler;
