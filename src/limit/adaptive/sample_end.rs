//! When the sample of an admitted call ends: with its response, or, for an
//! `http::Response` whose permit its body holds, when the body ends.
//!
//! A limit and its samples must describe the same span. With
//! [`hold_permit_in_body`](super::AdaptiveLimitLayer::hold_permit_in_body)
//! a call holds its permit until its body ends, so it is timed until then
//! too: a handler that streams for 0.6 s after its headers is a 0.6 s call,
//! and the limit grows while the origin has room. (Timed to its headers
//! such a call looked instant while the limit stayed full, and the limit
//! never rose.)

use super::controller::{Controller, Started};
use super::outcome::Outcome;
use super::Limit;
use crate::release::{HoldInResponse, ReleaseOnCompletion};
use crate::time::Clock;

/// A served call's sample, to be taken when its work ends.
pub struct PendingSample<L, C> {
    pub(crate) controller: Controller<L>,
    pub(crate) clock: C,
    pub(crate) started: Started,
}

impl<L: Limit, C: Clock> PendingSample<L, C> {
    /// Takes the sample now, with `outcome`.
    pub fn finish(self, outcome: Outcome) {
        self.controller.finish(self.started, &self.clock, outcome);
    }
}

impl<L, C> core::fmt::Debug for PendingSample<L, C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PendingSample")
            .field("started", &self.started)
            .finish_non_exhaustive()
    }
}

/// When the sample of a served call with response `R` ends (the `M` of an
/// [`AdaptiveLimit`](super::AdaptiveLimit), which also says when its permit
/// comes back).
pub trait SampleEnd<R, L, C> {
    /// The response handed on.
    type Output;

    /// Ends `pending` now, or hands it to what lives on in the response.
    fn end(response: R, pending: PendingSample<L, C>) -> Self::Output;

    /// The response of a call that gives no sample here (a drop, taken at
    /// once, or an ignored call).
    fn pass(response: R) -> Self::Output;
}

impl<R, L: Limit, C: Clock> SampleEnd<R, L, C> for ReleaseOnCompletion {
    type Output = R;

    fn end(response: R, pending: PendingSample<L, C>) -> R {
        pending.finish(Outcome::Served);
        response
    }

    fn pass(response: R) -> R {
        response
    }
}

/// The response holds the permit, but what it does after it is handed over
/// is the caller's: the sample ends with the response.
impl<R, L: Limit, C: Clock> SampleEnd<R, L, C> for HoldInResponse {
    type Output = R;

    fn end(response: R, pending: PendingSample<L, C>) -> R {
        <ReleaseOnCompletion as SampleEnd<R, L, C>>::end(response, pending)
    }

    fn pass(response: R) -> R {
        response
    }
}
