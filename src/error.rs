//! The errors edgeshed's middleware produce.
//!
//! Services return [`BoxError`], like tower's middleware; find out what
//! happened with `error.is::<Overloaded>()` or `downcast_ref`, and map it to a
//! status: [`Overloaded`] → 503, [`Expired`] → 504.

use core::fmt;

/// A type-erased error, as used throughout the tower ecosystem.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a request was refused admission for lack of capacity.
///
/// `#[non_exhaustive]`: later causes (an adaptive limit's own refusals, say)
/// may be added, so a `match` needs a `_` arm.
///
/// ```compile_fail
/// use edgeshed::error::OverloadCause;
/// // error: non-exhaustive patterns: `_` not covered
/// fn status(cause: OverloadCause) -> &'static str {
///     match cause {
///         OverloadCause::Shed => "shed",
///         OverloadCause::QueueTimeout => "queue timeout",
///     }
/// }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OverloadCause {
    /// Rejected at once: the limit was reached and the queue full (or disabled),
    /// or an inner service was not ready.
    #[default]
    Shed,
    /// Waited in the admission queue until its queue timeout passed.
    QueueTimeout,
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
        Self {
            cause: OverloadCause::QueueTimeout,
        }
    }

    /// Whether the request was shed at once or timed out in the queue.
    pub const fn cause(&self) -> OverloadCause {
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

/// The configuration parameter an [`InvalidConfig`] refuses.
///
/// `#[non_exhaustive]`: later parameters (adaptive limits) may be added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Parameter {
    /// `max_in_flight`: the concurrency limit.
    MaxInFlight,
    /// The queue timeout of a bounded queue (`Policy::Queue { timeout, .. }`).
    QueueTimeout,
}

impl Parameter {
    /// The parameter's name as written in the Rust API (`max_in_flight`, `timeout`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::MaxInFlight => "max_in_flight",
            Self::QueueTimeout => "timeout",
        }
    }
}

/// A limiter was configured with a value that cannot work; the constructor
/// refused it instead of building a limiter that misbehaves.
///
/// The same rules as the JS `Limiter` (which throws a `RangeError` naming the
/// option): a limit of zero would answer "service overloaded" to every call,
/// and a queue timeout of zero would shed every waiter as a timeout.
///
/// ```
/// use edgeshed::error::Parameter;
/// use edgeshed::limit::ConcurrencyLimitLayer;
///
/// let error = ConcurrencyLimitLayer::new(0).unwrap_err();
/// assert_eq!(error.parameter(), Parameter::MaxInFlight);
/// assert_eq!(error.to_string(), "max_in_flight must be at least 1, got 0");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InvalidConfig {
    parameter: Parameter,
}

impl InvalidConfig {
    pub(crate) const fn new(parameter: Parameter) -> Self {
        Self { parameter }
    }

    /// Which parameter was refused.
    pub const fn parameter(&self) -> Parameter {
        self.parameter
    }
}

impl fmt::Display for InvalidConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.parameter {
            Parameter::MaxInFlight => f.write_str("max_in_flight must be at least 1, got 0"),
            Parameter::QueueTimeout => f.write_str(
                "timeout (the queue timeout) must be longer than zero when max_queue > 0: every wait must be bounded",
            ),
        }
    }
}

impl std::error::Error for InvalidConfig {}
