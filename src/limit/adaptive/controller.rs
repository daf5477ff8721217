//! Feeds a [`Limit`] and applies its answer to a semaphore.

use super::{Limit, Outcome, Sample};
use crate::semaphore::Semaphore;
use crate::sync::{lock, Arc, Mutex};
use crate::time::{Clock, Instant};
use core::fmt;
use core::time::Duration;

/// Drives one [`Limit`] algorithm and applies each new limit to a
/// [`Semaphore`] with [`set_limit`](Semaphore::set_limit).
///
/// Call [`start`](Self::start) once a call is admitted (holding its permit)
/// and [`finish`](Self::finish) with its [`Outcome`] when it completes,
/// before its permit is returned. Clones share the algorithm and the
/// semaphore. The algorithm's update and the `set_limit` happen under one
/// lock, so concurrent completions apply their limits in the order the
/// algorithm produced them.
///
/// ```
/// use edgeshed::limit::adaptive::{Aimd, Controller, Outcome};
/// use edgeshed::semaphore::Semaphore;
/// use edgeshed::time::ManualClock;
/// use std::time::Duration;
///
/// let clock = ManualClock::new();
/// let semaphore = Semaphore::new(1);
/// let controller = Controller::new(Aimd::default(), semaphore.clone());
/// assert_eq!(semaphore.limit(), 6); // the algorithm's initial limit
///
/// let permit = semaphore.try_acquire().unwrap();
/// let started = controller.start(&clock);
/// clock.advance(Duration::from_millis(5));
/// let limit = controller.finish(started, &clock, Outcome::Dropped);
/// drop(permit);
/// assert_eq!((limit, semaphore.limit()), (5, 5)); // backed off on the drop
/// ```
pub struct Controller<L> {
    shared: Arc<Mutex<State<L>>>,
    semaphore: Semaphore,
}

struct State<L> {
    algorithm: L,
    applied: usize,
}

/// What [`Controller::start`] noted about a call: when it was admitted and
/// how many calls were in flight then (itself included).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Started {
    at: Instant,
    wall: Option<Duration>,
    in_flight: usize,
}

impl Started {
    /// When the call was admitted.
    pub const fn at(&self) -> Instant {
        self.at
    }

    /// When the call was admitted on the wall clock, if the clock has one.
    pub const fn wall(&self) -> Option<Duration> {
        self.wall
    }

    /// Calls in flight when it was admitted, itself included.
    pub const fn in_flight(&self) -> usize {
        self.in_flight
    }
}

impl<L: Limit> Controller<L> {
    /// Drives `semaphore` with `algorithm`, starting at its current limit.
    pub fn new(algorithm: L, semaphore: Semaphore) -> Self {
        let applied = algorithm.limit();
        semaphore.set_limit(applied);
        Self {
            shared: Arc::new(Mutex::new(State { algorithm, applied })),
            semaphore,
        }
    }

    /// Notes the start of an admitted call now, on `clock` (call it while
    /// holding the permit).
    pub fn start<C: Clock>(&self, clock: &C) -> Started {
        Started {
            at: clock.now(),
            wall: clock.wall_time(),
            in_flight: self.semaphore.in_use(),
        }
    }

    /// Feeds the call that ended now (on `clock`) with `outcome` to the
    /// algorithm and applies the new limit; returns the limit. An
    /// [`Outcome::Ignored`] call is no sample: the limit stays.
    pub fn finish<C: Clock>(&self, started: Started, clock: &C, outcome: Outcome) -> usize {
        let rtt = clock.now().saturating_duration_since(started.at);
        if outcome == Outcome::Ignored {
            return self.limit();
        }
        let dropped = outcome == Outcome::Dropped;
        let sample =
            Sample::new(started.at, rtt, started.in_flight, dropped).with_wall(started.wall);
        let mut state = lock(&self.shared);
        let limit = state.algorithm.update(&sample);
        if limit != state.applied {
            state.applied = limit;
            self.semaphore.set_limit(limit);
        }
        limit
    }

    /// The limit applied last.
    pub fn limit(&self) -> usize {
        lock(&self.shared).applied
    }

    /// Reads the algorithm's state (for stats or tests).
    pub fn with_algorithm<R>(&self, read: impl FnOnce(&L) -> R) -> R {
        read(&lock(&self.shared).algorithm)
    }

    /// The semaphore whose limit this controller sets.
    pub fn semaphore(&self) -> &Semaphore {
        &self.semaphore
    }
}

impl<L> Clone for Controller<L> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
            semaphore: self.semaphore.clone(),
        }
    }
}

impl<L> fmt::Debug for Controller<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Controller")
            .field("semaphore", &self.semaphore)
            .finish_non_exhaustive()
    }
}
