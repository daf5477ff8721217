//! Limits on how much work a service takes on at once.

pub mod concurrency;

pub use concurrency::{ConcurrencyLimit, ConcurrencyLimitLayer, GlobalConcurrencyLimitLayer};
