//! Why acquiring a permit failed.

use core::fmt;

/// Why [`Semaphore::try_acquire`](super::Semaphore::try_acquire) failed (`#[non_exhaustive]`: a `match`
/// needs a `_` arm).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TryAcquireError {
    /// Every permit is in use (or promised to a waiter).
    NoPermits,
    /// The semaphore was closed.
    Closed,
}

/// Why an [`Acquire`](super::Acquire) failed (`#[non_exhaustive]`: a `match` needs a `_` arm).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AcquireError {
    /// The queue already held the maximum number of waiters.
    QueueFull,
    /// The semaphore was closed.
    Closed,
    /// A more critical arrival took this waiter's place in a full queue
    /// (only acquisitions made by an [`Admission`](crate::admission::Admission)).
    Displaced,
    /// The caller's key holds more than its fair share: refused instead of
    /// queued while calls of other keys wait, or its newest waiter given up
    /// to an arrival of a key holding less when the queue was full (only
    /// acquisitions made by an [`Admission`](crate::admission::Admission)).
    FairShare,
    /// It reached the head of a standing codel queue after waiting longer
    /// than the target (only acquisitions made by an
    /// [`Admission`](crate::admission::Admission) with a codel queue).
    Stale,
}

impl fmt::Display for TryAcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NoPermits => "no permits available",
            Self::Closed => "semaphore closed",
        })
    }
}

impl fmt::Display for AcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::QueueFull => "semaphore queue is full",
            Self::Closed => "semaphore closed",
            Self::Displaced => "displaced from the semaphore queue by a more critical waiter",
            Self::FairShare => "the key holds more than its fair share while other keys wait",
            Self::Stale => "waited longer than the target of a standing codel queue",
        })
    }
}

impl std::error::Error for TryAcquireError {}
impl std::error::Error for AcquireError {}
