//! The synchronous first step of admission: admit, refuse, or queue.

use super::{
    Admission, AdmitError, Call, Criticality, Decision, Policy, QueueDiscipline, QueueWait, Queued,
};
use crate::error::Overloaded;
use crate::semaphore::{Ask, TryAcquireError};
use crate::sync::lock;
use crate::sync::{Arc, Ordering};
use crate::time::{Clock, Instant};
use crate::Key;
use core::time::Duration;

impl<C: Clock> Admission<C> {
    /// Admits a call of `criticality` for `key` (with its fair-queueing
    /// `weight`) if a permit is free for it now, as
    /// [`admit_call`](Self::admit_call) would at once; `None`, with nothing
    /// counted, when it would not (no free permit or share, or a rate limit
    /// to check), so the caller can still make the call the whole way.
    pub fn try_admit_keyed(
        &self,
        criticality: Criticality,
        key: &Key,
        weight: u32,
    ) -> Option<crate::semaphore::Permit> {
        if self.rate.is_some() {
            return None;
        }
        let shared = &self.shared;
        let permit = shared
            .semaphore
            .try_acquire_keyed(criticality, key, weight)
            .ok()?;
        shared.saw(Some(key));
        shared.counters.admitted.add(criticality);
        if matches!(shared.discipline, QueueDiscipline::Codel { .. }) {
            shared.semaphore.note_idle();
        }
        Some(permit)
    }

    /// The first step of admission, run synchronously: admitted, rejected, or
    /// a [`Queued`] wait to poll. In order: a passed deadline (504), the rate
    /// limit (429), a free slot for the call's criticality, then the policy.
    pub(crate) fn decide(&self, call: Call, deadline: Option<Instant>) -> Decision<C::Sleep> {
        let shared = &self.shared;
        let counters = &shared.counters;
        let mut read = None;
        let mut now = || *read.get_or_insert_with(|| self.clock.now());
        if let Some(deadline) = deadline {
            if deadline <= now() {
                counters.expired.fetch_add(1, Ordering::Relaxed);
                return Decision::Rejected(AdmitError::Expired);
            }
        }
        shared.saw(call.key());
        if let Some(rate) = &self.rate {
            if let Err(limited) = rate.check_at(call.key(), now()) {
                shared.refused(call.key());
                return Decision::Rejected(AdmitError::RateLimited(limited));
            }
        }
        let (rank, key, weight) = call.into_parts();
        let taken = match &key {
            None => shared.semaphore.try_acquire_as(rank),
            Some(key) => shared.semaphore.try_acquire_keyed(rank, key, weight),
        };
        let codel = matches!(shared.discipline, QueueDiscipline::Codel { .. });
        match taken {
            Ok(permit) => {
                counters.admitted.add(rank);
                if codel {
                    shared.semaphore.note_idle();
                }
                return Decision::Admitted(permit);
            }
            Err(TryAcquireError::Closed) => return Decision::Rejected(AdmitError::Closed),
            Err(_) => {}
        }
        let (max_waiters, timeout) = match shared.policy {
            Policy::Wait => (usize::MAX, None),
            Policy::Queue { max_queue, timeout } if max_queue > 0 => (max_queue, Some(timeout)),
            _ => {
                let lent = shared
                    .semaphore
                    .try_acquire_lent(rank, key.as_ref().map(|key| (key, weight)));
                if let Some(permit) = lent {
                    counters.admitted.add(rank);
                    return Decision::Admitted(permit);
                }
                counters.shed.add(rank);
                shared.refused(key.as_ref());
                return Decision::Rejected(AdmitError::Overloaded(Overloaded::new()));
            }
        };
        if shared.queue_wait == QueueWait::Auto && self.waits_too_long(rank, key.as_ref(), now()) {
            counters.queue_timeouts.add(rank);
            shared.refused(key.as_ref());
            return Decision::Rejected(AdmitError::Overloaded(Overloaded::queue_timeout()));
        }
        let at = (codel || timeout.is_some()).then(&mut now);
        let timer = match (timeout, at) {
            (Some(timeout), Some(at)) => {
                let timeout = match shared.discipline {
                    QueueDiscipline::Codel { target } if shared.semaphore.standing(at) => target,
                    _ => timeout,
                };
                let queue_end = at + timeout;
                Some(match deadline {
                    Some(deadline) if deadline <= queue_end => {
                        (self.clock.sleep_until(deadline), true)
                    }
                    _ => (self.clock.sleep_until(queue_end), false),
                })
            }
            _ => deadline.map(|deadline| (self.clock.sleep_until(deadline), true)),
        };
        let ask = Ask {
            rank,
            key,
            weight,
            max_waiters,
            at: codel.then_some(at).flatten(),
        };
        Decision::Queued(Queued::new(Arc::clone(shared), ask, timer))
    }

    /// [`QueueWait::Auto`]'s test for a call of `rank` and `key` that must
    /// wait, at `now` (see `wait_model.rs`).
    fn waits_too_long(&self, rank: Criticality, key: Option<&Key>, now: Instant) -> bool {
        let shared = &self.shared;
        let position = shared.semaphore.queue_position(rank, key);
        // Calls done: admitted (picked up) minus those still holding a permit.
        let holding = position.in_use.saturating_sub(position.handed) as u64;
        let completed = shared.counters.admitted.total().saturating_sub(holding);
        let target = match shared.discipline {
            QueueDiscipline::Codel { target } => target,
            _ => Duration::ZERO,
        };
        let mut model = lock(&shared.wait_model);
        model.observe(now, completed, position.limit);
        model.too_long(position.ahead, position.in_use, target)
    }

    /// Whether [`decide`](Self::decide) of a default call without a deadline
    /// would queue a request that found no free permit (rather than reject
    /// it): the semaphore is open and the policy waits, or its queue has room.
    pub(crate) fn would_queue(&self) -> bool {
        let semaphore = &self.shared.semaphore;
        !semaphore.is_closed()
            && match self.shared.policy {
                Policy::Wait => true,
                Policy::Shed => false,
                Policy::Queue { max_queue, .. } => max_queue > semaphore.waiters(),
            }
    }
}
