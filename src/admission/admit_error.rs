//! [`AdmitError`]: why admission was refused.

use crate::error::{BoxError, Closed, Expired, Overloaded, RateLimited};
use core::fmt;

/// Why admission was refused.
///
/// `#[non_exhaustive]`: a `match` needs a `_` arm. [`overloaded`](Self::overloaded),
/// [`rate_limited`](Self::rate_limited), [`is_expired`](Self::is_expired),
/// [`is_closed`](Self::is_closed) and [`into_box_error`](Self::into_box_error)
/// answer without one.
///
/// ```compile_fail
/// use edgeshed::admission::AdmitError;
/// // error: non-exhaustive patterns: `_` not covered
/// fn status(error: AdmitError) -> u16 {
///     match error {
///         AdmitError::Overloaded(_) | AdmitError::Closed => 503,
///         AdmitError::RateLimited(_) => 429,
///         AdmitError::Expired => 504,
///     }
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AdmitError {
    /// At capacity: shed at once, timed out in the queue or displaced from it
    /// (HTTP 503; [`Overloaded::reason`] says which).
    Overloaded(Overloaded),
    /// The call's key asked for too much: over its fair share or its rate
    /// (HTTP 429; [`RateLimited::reason`] says which).
    RateLimited(RateLimited),
    /// The request's deadline passed before it was admitted (HTTP 504).
    Expired,
    /// The limiter was closed.
    Closed,
}

impl AdmitError {
    /// The `Overloaded` error, if that is why admission was refused.
    pub fn overloaded(&self) -> Option<Overloaded> {
        match self {
            Self::Overloaded(overloaded) => Some(*overloaded),
            _ => None,
        }
    }

    /// The `RateLimited` error, if that is why admission was refused.
    pub fn rate_limited(&self) -> Option<RateLimited> {
        match self {
            Self::RateLimited(limited) => Some(*limited),
            _ => None,
        }
    }

    /// Whether the request's deadline passed before it was admitted (HTTP 504).
    pub fn is_expired(&self) -> bool {
        matches!(self, Self::Expired)
    }

    /// Whether the limiter was closed.
    pub fn is_closed(&self) -> bool {
        matches!(self, Self::Closed)
    }

    /// The same error as a [`BoxError`] holding the specific error type
    /// ([`Overloaded`], [`RateLimited`], [`Expired`] or [`Closed`]), so that
    /// `error.is::<Overloaded>()` works on it.
    pub fn into_box_error(self) -> BoxError {
        match self {
            Self::Overloaded(overloaded) => overloaded.into(),
            Self::RateLimited(limited) => limited.into(),
            Self::Expired => Expired::new().into(),
            Self::Closed => Closed::new().into(),
        }
    }
}

impl fmt::Display for AdmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Overloaded(overloaded) => overloaded.fmt(f),
            Self::RateLimited(limited) => limited.fmt(f),
            Self::Expired => Expired::new().fmt(f),
            Self::Closed => Closed::new().fmt(f),
        }
    }
}

impl std::error::Error for AdmitError {}
