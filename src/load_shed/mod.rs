//! Fail fast instead of waiting: reject a request with
//! [`Overloaded`](crate::error::Overloaded) when the inner service is not ready.
//!
//! Put `LoadShed` *outside* the limit it protects (`ServiceBuilder` order:
//! `.layer(LoadShedLayer::new())` before the concurrency limit); inside it,
//! the waiting happens where `LoadShed` cannot see it and nothing is shed.
//!
//! Any `Pending` of the inner stack counts as overload — a rate limiter's
//! empty window or a full buffer included. To shed only on a full concurrency
//! limit, prefer [`ConcurrencyLimitLayer::shed`](crate::limit::ConcurrencyLimitLayer::shed).
//!
//! ## No parked waiters
//!
//! tower's `LoadShed` leaves the inner service's pending readiness in place
//! after rejecting a request. Over a concurrency limit that means a queued
//! waiter stays behind, which captures the next released permit while its
//! owner sits idle; other instances keep being rejected even though nothing
//! is in flight. edgeshed's `LoadShed` withdraws the pending readiness by
//! replacing the inner service with a fresh clone, so a rejected instance
//! never holds or captures capacity. (That is why it requires `S: Clone`.)

mod future;
mod layer;
mod service;

pub mod error {
    //! The error of [`LoadShed`](super::LoadShed).
    pub use crate::error::{OverloadCause, Overloaded};
}

pub use future::ResponseFuture;
pub use layer::LoadShedLayer;
pub use service::LoadShed;
