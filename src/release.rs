//! When a response gives its permit back.

use crate::semaphore::Permit;
use core::ops::{Deref, DerefMut};

/// Decides what a [`ConcurrencyLimit`](crate::limit::ConcurrencyLimit)'s response
/// of type `R` does with its permit once the inner future has produced it.
pub trait Release<R> {
    /// The response type handed to the caller.
    type Output;

    /// Combines the inner response with its permit (`None` only if the
    /// future was polled after completing).
    fn finish(response: R, permit: Option<Permit>) -> Self::Output;
}

/// The default: the permit comes back as soon as the response future completes.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReleaseOnCompletion;

impl<R> Release<R> for ReleaseOnCompletion {
    type Output = R;

    fn finish(response: R, _permit: Option<Permit>) -> R {
        response
    }
}

/// The permit travels inside the response ([`Permitted`]) and comes back
/// when the caller drops it: for responses that keep working after the
/// future completed, such as a streamed body. For `http::Response`s, the
/// `http-body` feature's `HoldInBody` moves it into the body instead.
#[derive(Clone, Copy, Debug, Default)]
pub struct HoldInResponse;

impl<R> Release<R> for HoldInResponse {
    type Output = Permitted<R>;

    fn finish(response: R, permit: Option<Permit>) -> Permitted<R> {
        Permitted { response, permit }
    }
}

/// A response that still holds its admission permit.
///
/// Dereferences to the response. Split it with
/// [`into_parts`](Permitted::into_parts) to move the permit into whatever
/// lives as long as the work (a body stream, a spawned task).
#[derive(Debug)]
pub struct Permitted<R> {
    response: R,
    permit: Option<Permit>,
}

impl<R> Permitted<R> {
    /// The response and its permit; drop the permit when the work is done.
    pub fn into_parts(self) -> (R, Option<Permit>) {
        (self.response, self.permit)
    }

    /// The response, releasing the permit now.
    pub fn into_inner(self) -> R {
        self.response
    }
}

impl<R> Deref for Permitted<R> {
    type Target = R;

    fn deref(&self) -> &R {
        &self.response
    }
}

impl<R> DerefMut for Permitted<R> {
    fn deref_mut(&mut self) -> &mut R {
        &mut self.response
    }
}
