use crate::sync::AtomicU64;

/// A snapshot of an [`Admission`](super::Admission)'s state and counters.
///
/// `in_flight`, `queued` and `limit` held together at one instant (see
/// [`Admission::stats`](super::Admission::stats)): `queued > 0` implies
/// `in_flight >= limit`.
///
/// `#[non_exhaustive]`: fields will be added (adaptive limits come next), so
/// outside this crate a `Stats` is read, not built; start from
/// [`Stats::default`] where one is needed:
///
/// ```
/// let mut expected = edgeshed::Stats::default();
/// expected.limit = 2;
/// assert_eq!(edgeshed::Admission::wait(2).unwrap().stats(), expected);
/// ```
///
/// ```compile_fail
/// // error: cannot create non-exhaustive struct using struct expression
/// let stats = edgeshed::Stats {
///     in_flight: 0, queued: 0, limit: 2, admitted: 0, shed: 0, queue_timeouts: 0, expired: 0,
/// };
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Permits held right now.
    pub in_flight: usize,
    /// Requests waiting in the queue right now.
    pub queued: usize,
    /// The configured limit.
    pub limit: usize,
    /// Requests admitted since creation.
    pub admitted: u64,
    /// Requests rejected at once (limit reached, queue full or disabled).
    pub shed: u64,
    /// Requests rejected because their queue timeout passed.
    pub queue_timeouts: u64,
    /// Requests rejected because their deadline passed before admission.
    pub expired: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) admitted: AtomicU64,
    pub(crate) shed: AtomicU64,
    pub(crate) queue_timeouts: AtomicU64,
    pub(crate) expired: AtomicU64,
}
