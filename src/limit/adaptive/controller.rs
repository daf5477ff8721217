//! Feeds a [`Limit`] and applies its answer to a semaphore.

use super::{Limit, Sample};
use crate::semaphore::Semaphore;
use crate::sync::{lock, Arc, Mutex};
use crate::time::Instant;
use core::fmt;

/// Drives one [`Limit`] algorithm and applies each new limit to a
/// [`Semaphore`] with [`set_limit`](Semaphore::set_limit).
///
/// Call [`start`](Self::start) once a call is admitted (holding its permit)
/// and [`finish`](Self::finish) when it completes, before its permit is
/// returned. Clones share the algorithm and the semaphore. The algorithm's
/// update and the `set_limit` happen under one lock, so concurrent
/// completions apply their limits in the order the algorithm produced them.
///
/// ```
/// use edgeshed::limit::adaptive::{Aimd, Controller};
/// use edgeshed::semaphore::Semaphore;
/// use edgeshed::time::Instant;
/// use std::time::Duration;
///
/// let semaphore = Semaphore::new(1);
/// let controller = Controller::new(Aimd::default(), semaphore.clone());
/// assert_eq!(semaphore.limit(), 6); // the algorithm's initial limit
///
/// let permit = semaphore.try_acquire().unwrap();
/// let started = controller.start(Instant::from_origin(Duration::ZERO));
/// let limit = controller.finish(started, Instant::from_origin(Duration::from_millis(5)), true);
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
    in_flight: usize,
}

impl Started {
    /// When the call was admitted.
    pub const fn at(&self) -> Instant {
        self.at
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

    /// Notes the start of an admitted call (call it while holding the permit).
    pub fn start(&self, now: Instant) -> Started {
        Started {
            at: now,
            in_flight: self.semaphore.in_use(),
        }
    }

    /// Feeds the completed call to the algorithm and applies the new limit;
    /// returns it. `dropped`: the call ended in an overload answer, a
    /// timeout or an error.
    pub fn finish(&self, started: Started, now: Instant, dropped: bool) -> usize {
        let rtt = now.saturating_duration_since(started.at);
        let sample = Sample::new(started.at, rtt, started.in_flight, dropped);
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
