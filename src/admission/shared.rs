//! What every clone of an [`Admission`](super::Admission) shares.

use super::stats::Counters;
use super::{Criticality, Policy, QueueDiscipline, QueueWait};
use crate::semaphore::Semaphore;
use crate::Key;

/// The state every clone of an admission shares.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(super) semaphore: Semaphore,
    pub(super) policy: Policy,
    pub(super) discipline: QueueDiscipline,
    pub(super) queue_wait: QueueWait,
    /// The completion rate [`QueueWait::Auto`] measures.
    pub(super) wait_model: crate::sync::Mutex<super::wait_model::WaitModel>,
    pub(super) counters: Counters,
    pub(super) top_refused: super::top_keys::TopRefused,
    /// Set once a keyed call was seen: from then on refusals of calls
    /// without a key count for [`Admission::top_refused_keys`] too (a
    /// limiter whose calls never carry a key pays nothing for it).
    pub(super) keyed_seen: crate::sync::AtomicUsize,
}

impl Shared {
    /// Notes a call of `key`, before its admission is decided.
    #[inline]
    pub(crate) fn saw(&self, key: Option<&Key>) {
        if key.is_some() {
            self.keyed_seen.store(1, crate::sync::Ordering::Relaxed);
        }
    }

    /// Counts a refusal of a call of `key` for the top refused keys.
    pub(crate) fn refused(&self, key: Option<&Key>) {
        if key.is_some() || self.keyed_seen.load(crate::sync::Ordering::Relaxed) != 0 {
            self.top_refused.record(key.copied());
        }
    }

    /// The `shed` counter, for a `LoadShed` that counts into this admission.
    pub(crate) fn shed_counter(&self) -> &crate::sync::AtomicU64 {
        self.counters.shed.at(Criticality::Default)
    }
}
