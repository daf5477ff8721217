//! The errors edgeshed's middleware produce.
//!
//! Services return [`BoxError`], like tower's middleware; find out what
//! happened with `error.is::<Overloaded>()` or `downcast_ref`, and map it to a
//! status: [`Overloaded`] → 503, [`RateLimited`] → 429, [`Expired`] → 504.
//! Both refusals say why in the same shape: [`Overloaded::reason`] is an
//! [`OverloadCause`], [`RateLimited::reason`] a [`RateLimitReason`]; each
//! enum has `as_str()` and `Display` in the words the JS errors and the
//! worker's bodies use.

mod config;
mod rate;

pub use config::{InvalidConfig, Parameter};
pub use rate::{RateLimitReason, RateLimited};

use core::fmt;

/// A type-erased error, as used throughout the tower ecosystem.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a request was refused admission for lack of capacity: what
/// [`Overloaded::reason`] returns, as [`RateLimitReason`] is what
/// [`RateLimited::reason`] returns.
///
/// `#[non_exhaustive]`: later causes may be added, so a `match` needs a `_`
/// arm; [`as_str`](Self::as_str) names each without one.
///
/// ```compile_fail
/// use edgeshed::error::OverloadCause;
/// // error: non-exhaustive patterns: `_` not covered
/// fn status(cause: OverloadCause) -> &'static str {
///     match cause {
///         OverloadCause::Shed => "shed",
///         OverloadCause::QueueTimeout => "queue timeout",
///         OverloadCause::Displaced => "displaced",
///         OverloadCause::Budget => "budget",
///     }
/// }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OverloadCause {
    /// Rejected at once: the limit (for the call's criticality) was reached
    /// and the queue full (or disabled), or an inner service was not ready.
    /// Reason `"limit"`.
    #[default]
    Shed,
    /// Waited in the admission queue until its queue timeout passed.
    /// Reason `"queue_timeout"`.
    QueueTimeout,
    /// Waited in a full queue until a more critical arrival took its place.
    /// Reason `"displaced"`.
    Displaced,
    /// A fleet-wide budget had no permit to give (the worker's fleet budget).
    /// Reason `"budget"`.
    Budget,
}

impl OverloadCause {
    /// The reason as the JS errors and the worker's 503 bodies write it:
    /// `"limit"`, `"queue_timeout"`, `"displaced"` or `"budget"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Shed => "limit",
            Self::QueueTimeout => "queue_timeout",
            Self::Displaced => "displaced",
            Self::Budget => "budget",
        }
    }
}

impl fmt::Display for OverloadCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The request was refused because the service is at capacity.
///
/// `Display` is `service overloaded`. Maps to HTTP 503.
///
/// ```
/// use edgeshed::error::{BoxError, Overloaded};
///
/// let error: BoxError = Overloaded::new().into();
/// assert!(error.is::<Overloaded>());
/// assert_eq!(error.to_string(), "service overloaded");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Overloaded {
    cause: OverloadCause,
}

impl Overloaded {
    /// An `Overloaded` error of the [`OverloadCause::Shed`] kind (handy in tests).
    pub const fn new() -> Self {
        Self {
            cause: OverloadCause::Shed,
        }
    }

    /// An `Overloaded` error for a waiter whose queue timeout passed.
    pub const fn queue_timeout() -> Self {
        Self::because(OverloadCause::QueueTimeout)
    }

    /// An `Overloaded` error of any cause (the worker's fleet budget uses
    /// [`OverloadCause::Budget`]).
    pub const fn because(cause: OverloadCause) -> Self {
        Self { cause }
    }

    /// Why the request was refused: the same as [`reason`](Self::reason).
    pub const fn cause(&self) -> OverloadCause {
        self.cause
    }

    /// Why the request was refused, in the shape of
    /// [`RateLimited::reason`]: an enum whose [`as_str`](OverloadCause::as_str)
    /// (and `Display`) is the reason as the JS errors and the worker's 503
    /// bodies write it.
    ///
    /// ```
    /// use edgeshed::error::{OverloadCause, Overloaded};
    ///
    /// assert_eq!(Overloaded::new().reason(), OverloadCause::Shed);
    /// assert_eq!(Overloaded::new().reason().as_str(), "limit");
    /// let displaced = Overloaded::because(OverloadCause::Displaced);
    /// assert_eq!(displaced.reason().to_string(), "displaced");
    /// ```
    pub const fn reason(&self) -> OverloadCause {
        self.cause
    }
}

impl fmt::Display for Overloaded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("service overloaded")
    }
}

impl std::error::Error for Overloaded {}

/// The request's deadline passed before it completed. Maps to HTTP 504.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Expired(());

impl Expired {
    /// An `Expired` error.
    pub const fn new() -> Self {
        Self(())
    }
}

impl fmt::Display for Expired {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("deadline expired")
    }
}

impl std::error::Error for Expired {}

/// `call` was invoked without a successful `poll_ready` first.
///
/// tower's middleware panic here; edgeshed answers with this error instead,
/// because on wasm a panic traps and breaks the whole isolate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct NotReady(());

impl NotReady {
    /// A `NotReady` error.
    pub const fn new() -> Self {
        Self(())
    }
}

impl fmt::Display for NotReady {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("call before poll_ready reported ready")
    }
}

impl std::error::Error for NotReady {}

/// The limiter was closed and admits nothing any more.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Closed(());

impl Closed {
    /// A `Closed` error.
    pub const fn new() -> Self {
        Self(())
    }
}

impl fmt::Display for Closed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("limiter closed")
    }
}

impl std::error::Error for Closed {}
