//! The origins of this isolate: one [`OriginRuntime`] each, and the one
//! pipeline of a call to it: [`OriginRuntime::acquire`] (its permits),
//! then [`OriginRuntime::send`].
//!
//! Dependency order: `limit` (time limits, the aborted fetch) and
//! `sampling` (the adaptive limits' samples) ← `runtime` (the origin and
//! its fetch) ← `acquire` (its permits) ← `build` (from the configuration).

mod acquire;
mod build;
mod limit;
mod runtime;
mod sampling;

pub(crate) use acquire::Acquiring;
pub(crate) use build::runtimes;
pub(crate) use limit::{AbortOnDrop, CallLimit};
pub(crate) use runtime::{Answered, CallError, OriginRuntime, Outgoing};

impl OriginRuntime {
    /// The keys this origin's limiter refused most often (its stats and
    /// metrics); kept out of `runtime.rs`, whose one subject is the call.
    pub(crate) fn top_refused_keys(&self) -> Vec<edgeshed::admission::RefusedKey> {
        self.admission.top_refused_keys()
    }
}
