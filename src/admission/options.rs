//! [`Options`]: what an [`Admission`](super::Admission) adds to its limit and
//! policy — a reserve per criticality, a queue discipline, a rate limit.

use super::{Admission, Policy, Reserve};
use crate::error::{InvalidConfig, Parameter};
use crate::rate_limit::{Rate, RateLimiter};
use crate::time::Clock;
use crate::Key;
use core::time::Duration;

/// How the admission queue orders its waiters and how long they may wait.
///
/// Higher criticalities are always served first; this decides the order
/// within one criticality.
///
/// `#[non_exhaustive]`: a `match` needs a `_` arm.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum QueueDiscipline {
    /// Oldest first; every waiter may wait the queue timeout.
    #[default]
    Fifo,
    /// Controlled delay with adaptive LIFO, as Facebook runs it in front of
    /// its servers ("Fail at Scale", Ben Maurer, ACM Queue 13(8), 2015; after
    /// Nichols and Jacobson, "Controlling Queue Delay", ACM Queue 10(5), 2012).
    ///
    /// The *interval* is the queue timeout (Facebook's `N`, 100 ms there) and
    /// `target` is Facebook's `M` (5 ms there, [`DEFAULT_CODEL_TARGET`](Self::DEFAULT_CODEL_TARGET)):
    /// - while the queue has been empty at some point within the last
    ///   interval, a new waiter may wait up to the queue timeout, oldest first;
    /// - once a standing queue has persisted longer than the interval, new
    ///   waiters may wait only `target`, and the queue is served newest first
    ///   (adaptive LIFO) until it drains, so the calls that still have a
    ///   waiting client go first and the stale ones time out.
    ///
    /// CoDel's own target (5 ms) is a sojourn time that a queue may keep
    /// standing; here, as at Facebook, it is the short timeout of a standing
    /// queue. The switch is made by the first arrival that finds the queue
    /// standing for longer than the interval.
    Codel {
        /// The timeout of new waiters once a queue stands (Facebook's `M`).
        target: Duration,
    },
}

impl QueueDiscipline {
    /// Facebook's (and CoDel's) 5 ms.
    pub const DEFAULT_CODEL_TARGET: Duration = Duration::from_millis(5);

    /// [`Codel`](Self::Codel) with the default target of 5 ms.
    pub const fn codel() -> Self {
        Self::Codel {
            target: Self::DEFAULT_CODEL_TARGET,
        }
    }
}

/// How long a call may wait in the queue: up to the queue timeout, or (with
/// `Auto`) only while its expected wait is within one service time.
///
/// `#[non_exhaustive]`: a `match` needs a `_` arm.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum QueueWait {
    /// Every waiter may wait the queue timeout (codel's target while a
    /// codel queue stands).
    #[default]
    Timeout,
    /// A call whose expected wait (its place in the queue over the measured
    /// completion rate) is longer than the larger of codel's target and one
    /// measured service time is refused at arrival (503 `queue_timeout`):
    /// a burst's excess is answered at once, and admitted calls stay near
    /// the unloaded latency. See `src/admission/wait_model.rs` for the rule
    /// and its evidence. Needs a bounded queue.
    Auto,
}

/// The options of an [`Admission`](super::Admission) beyond its limit and
/// policy; [`Options::new`] has none of them.
///
/// ```
/// use edgeshed::admission::{Admission, Options, Policy, QueueDiscipline, Reserve};
/// use edgeshed::rate_limit::Rate;
/// use edgeshed::time::ManualClock;
/// use std::time::Duration;
///
/// # fn main() -> Result<(), edgeshed::InvalidConfig> {
/// let options = Options::new()
///     .reserve(Reserve::default())            // critical 0.1, default 0.2
///     .discipline(QueueDiscipline::codel())   // target 5 ms, interval = the queue timeout
///     .rate(Rate::per_second(50)?.with_burst(100)?);
/// let policy = Policy::queue(32, Duration::from_millis(100));
/// let admission = Admission::with_options(16, policy, options, ManualClock::new())?;
/// assert_eq!(admission.reserve(), Reserve::default());
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    pub(super) reserve: Option<Reserve>,
    pub(super) discipline: QueueDiscipline,
    pub(super) rate: Option<Rate>,
    pub(super) queue_wait: QueueWait,
}

impl Options {
    /// No reserve (every call may use the whole limit), FIFO, no rate limit.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps part of the limit for higher criticalities (see [`Reserve`]).
    pub fn reserve(self, reserve: Reserve) -> Self {
        Self {
            reserve: Some(reserve),
            ..self
        }
    }

    /// Orders the queue (see [`QueueDiscipline`]).
    pub fn discipline(self, discipline: QueueDiscipline) -> Self {
        Self { discipline, ..self }
    }

    /// Sets how long a call may wait (see [`QueueWait`]).
    pub fn queue_wait(self, queue_wait: QueueWait) -> Self {
        Self { queue_wait, ..self }
    }

    /// Limits each key's rate (calls without a key share one allowance);
    /// checked before the concurrency limit.
    pub fn rate(self, rate: Rate) -> Self {
        Self {
            rate: Some(rate),
            ..self
        }
    }

    /// Refuses a codel discipline without a bounded queue, or with a target
    /// that is zero or not shorter than the queue timeout.
    pub(super) fn validate(self, policy: Policy) -> Result<Self, InvalidConfig> {
        if self.queue_wait == QueueWait::Auto
            && !matches!(policy, Policy::Queue { max_queue, .. } if max_queue > 0)
        {
            return Err(InvalidConfig::new(Parameter::MaxQueueWait));
        }
        if let QueueDiscipline::Codel { target } = self.discipline {
            let Policy::Queue { max_queue, timeout } = policy else {
                return Err(InvalidConfig::new(Parameter::QueueDiscipline));
            };
            if max_queue == 0 {
                return Err(InvalidConfig::new(Parameter::QueueDiscipline));
            }
            if target.is_zero() || target >= timeout {
                return Err(InvalidConfig::new(Parameter::CodelTarget));
            }
        }
        Ok(self)
    }
}

impl<C: Clock> Admission<C> {
    /// How the queue orders its waiters.
    pub fn discipline(&self) -> QueueDiscipline {
        self.shared.discipline
    }

    /// How long a call may wait in the queue.
    pub fn queue_wait(&self) -> QueueWait {
        self.shared.queue_wait
    }

    /// The part of the limit kept for higher criticalities.
    pub fn reserve(&self) -> Reserve {
        self.shared.semaphore.reserve()
    }

    /// Keeps `reserve` of the limit for higher criticalities from now on
    /// (calls in flight are never interrupted; waiters the new reserve lets
    /// in are admitted at once).
    pub fn set_reserve(&self, reserve: Reserve) {
        self.shared.semaphore.set_reserve(reserve);
    }

    /// The rate limit checked before the concurrency limit, if any.
    pub fn rate_limiter(&self) -> Option<&RateLimiter<C, Key>> {
        self.rate.as_ref()
    }
}
