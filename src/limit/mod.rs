//! Limits on how much work a service takes on at once: a fixed
//! [`concurrency`] limit, or an [`adaptive`] one that follows the origin;
//! [`classified`] admits each request by its own criticality and key.

pub mod adaptive;
pub mod classified;
pub mod concurrency;
mod per_service;

pub use adaptive::AdaptiveLimitLayer;
pub use classified::{ClassifiedLimit, ClassifiedLimitLayer};
pub use concurrency::{ConcurrencyLimit, ConcurrencyLimitLayer, GlobalConcurrencyLimitLayer};
pub use per_service::PerService;
