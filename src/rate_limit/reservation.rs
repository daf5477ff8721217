//! [`Reservation`]: a turn reserved by [`RateLimiter::reserve`](super::RateLimiter::reserve).

use super::table::Cell;
use crate::time::Instant;
use crate::Key;

/// A turn reserved by [`RateLimiter::reserve`](super::RateLimiter::reserve):
/// when the call may proceed, and which allowance to give the turn back to
/// ([`RateLimiter::refund`](super::RateLimiter::refund)) if it never does.
///
/// A refund goes to the allowance that granted the turn: the key's entry of
/// that moment (not a later one, should the key have been dropped and
/// tracked again), the unkeyed calls' allowance, or the shared overflow one.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use = "a reservation not used must be given back with `RateLimiter::refund`"]
pub struct Reservation<K = Key> {
    pub(super) at: Instant,
    pub(super) key: Option<K>,
    pub(super) cell: Cell,
}

impl<K> Reservation<K> {
    /// When the call may proceed (now, or within the bound it was reserved with).
    pub fn at(&self) -> Instant {
        self.at
    }

    /// The key it was reserved for (`None`: an unkeyed call).
    pub fn key(&self) -> Option<&K> {
        self.key.as_ref()
    }
}
