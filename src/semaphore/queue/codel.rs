//! Codel's overload state for a codel queue, as Facebook and folly keep it:
//! detected once no permit has been idle for a whole interval, and kept for
//! one interval after it was last seen.
//!
//! The semaphore has no clock: arrivals bring their time (an [`Ask`]'s
//! `at`), and the latest one seen stands for "now" where a release needs it
//! (a stale waiter at the head of the queue). Under overload arrivals are
//! frequent, so that time lags little; without arrivals there is no
//! overload to act on.
//!
//! [`Ask`]: super::super::Ask

use crate::time::Instant;
use core::time::Duration;

#[derive(Debug)]
pub(crate) struct Codel {
    /// The short timeout of a standing queue (Facebook's `M`).
    target: Duration,
    /// How long a queue must stand before it counts as standing, and how
    /// long that state lasts once seen (Facebook's `N`: the queue timeout).
    interval: Duration,
    /// When the current busy spell began: the first arrival that found no
    /// free permit since a permit was last idle.
    busy_since: Option<Instant>,
    /// The standing state holds until then.
    standing_until: Option<Instant>,
    /// The latest arrival's time.
    now: Option<Instant>,
    /// A permit went idle (back to the pool with nobody to take it) since
    /// the last arrival looked.
    idle: bool,
}

impl Codel {
    pub(crate) fn new(target: Duration, interval: Duration) -> Self {
        Self {
            target,
            interval,
            busy_since: None,
            standing_until: None,
            now: None,
            idle: false,
        }
    }

    /// A permit went idle: the busy spell is over (the standing state, once
    /// seen, still holds for its interval).
    pub(crate) fn went_idle(&mut self) {
        self.idle = true;
    }

    /// An arrival at `at` that found no free permit: whether the queue
    /// stands now. A queue stands once its busy spell has lasted longer
    /// than the interval, and for one interval after that was last seen:
    /// waiters leaving by their own (target) timeouts do not end it.
    pub(crate) fn arrival(&mut self, at: Instant) -> bool {
        self.now = Some(self.now.map_or(at, |now| now.max(at)));
        if core::mem::take(&mut self.idle) {
            self.busy_since = None;
        }
        let since = *self.busy_since.get_or_insert(at);
        if at.saturating_duration_since(since) > self.interval {
            self.standing_until = Some(at + self.interval);
        }
        self.is_standing(at)
    }

    /// Whether the standing state holds at `at`.
    pub(crate) fn is_standing(&self, at: Instant) -> bool {
        self.standing_until.is_some_and(|until| at < until)
    }

    /// Whether a waiter that arrived at `arrived` has waited longer than the
    /// target by the latest time seen.
    pub(crate) fn overstayed(&self, arrived: Instant) -> bool {
        self.now
            .is_some_and(|now| now.saturating_duration_since(arrived) > self.target)
    }
}
