//! Admission control: a semaphore plus the policy applied when it is full.
//!
//! An [`Admission`] is the shared heart of every limiter in edgeshed — the
//! [`ConcurrencyLimit`](crate::limit::ConcurrencyLimit) middleware, the JS
//! `Limiter` and the worker's global and per-origin limits. It decides, for
//! each request, between three outcomes:
//!
//! * **admitted** — a [`Permit`] is handed out; dropping it frees the slot;
//! * **queued** — wait in FIFO order, bounded by the [`Policy`];
//! * **rejected** — [`Overloaded`](crate::error::Overloaded) (shed or queue
//!   timeout), [`Expired`](crate::error::Expired) (the request's deadline
//!   passed while queued) or [`Closed`](crate::error::Closed).
//!
//! ```
//! use edgeshed::admission::{Admission, Policy};
//! use edgeshed::error::OverloadCause;
//! use edgeshed::time::ManualClock;
//! use std::time::Duration;
//! # futures::executor::block_on(async {
//! let clock = ManualClock::new();
//! let policy = Policy::Queue { max_queue: 1, timeout: Duration::from_millis(20) };
//! let admission = Admission::new(1, policy, clock.clone()).unwrap();
//!
//! let held = admission.admit().await.unwrap(); // admitted at once
//! let mut queued = Box::pin(admission.admit());  // will wait
//! assert!(futures::poll!(queued.as_mut()).is_pending());
//! // The queue (1 place) is full now, so a third request is shed.
//! let shed = admission.admit().await.unwrap_err();
//! assert_eq!(shed.overloaded().map(|o| o.cause()), Some(OverloadCause::Shed));
//!
//! clock.advance(Duration::from_millis(20)); // the queued one times out
//! let timed_out = queued.await.unwrap_err();
//! assert_eq!(timed_out.overloaded().map(|o| o.cause()), Some(OverloadCause::QueueTimeout));
//! assert_eq!(admission.stats().queued, 0);
//! drop(held);
//! # });
//! ```

mod admit;
mod policy;
mod stats;

pub use admit::{Admit, AdmitError};
pub use policy::Policy;
pub use stats::Stats;

pub(crate) use admit::{Decision, Queued};

use crate::error::InvalidConfig;
use crate::semaphore::{Permit, Semaphore, TryAcquireError};
use crate::sync::{Arc, Ordering};
use crate::time::{Clock, Instant, NoClock, RealClock};
use stats::Counters;

/// A shared admission limit: at most `max_in_flight` permits out, and a
/// [`Policy`] for what happens to the rest.
///
/// Clones share the limit, the queue and the counters.
#[derive(Clone, Debug)]
pub struct Admission<C = NoClock> {
    shared: Arc<Shared>,
    clock: C,
}

#[derive(Debug)]
pub(crate) struct Shared {
    semaphore: Semaphore,
    policy: Policy,
    counters: Counters,
}

impl Shared {
    /// The `shed` counter, for a `LoadShed` that counts into this admission.
    pub(crate) fn shed_counter(&self) -> &crate::sync::AtomicU64 {
        &self.counters.shed
    }
}

impl Admission<NoClock> {
    /// Waits (FIFO, unbounded) when `max_in_flight` requests are in flight:
    /// tower's behaviour. Needs no clock: nothing here can time out.
    ///
    /// Refuses `max_in_flight == 0` ([`InvalidConfig`]).
    pub fn wait(max_in_flight: usize) -> Result<Self, InvalidConfig> {
        Self::build(max_in_flight, Policy::Wait, NoClock)
    }

    /// Rejects at once with `Overloaded` when `max_in_flight` requests are
    /// in flight. Needs no clock: nothing here waits.
    ///
    /// Refuses `max_in_flight == 0` ([`InvalidConfig`]).
    pub fn shed(max_in_flight: usize) -> Result<Self, InvalidConfig> {
        Self::build(max_in_flight, Policy::Shed, NoClock)
    }
}

impl<C: RealClock> Admission<C> {
    /// An admission limit with any policy; `clock` arms its queue timeouts
    /// and deadlines.
    ///
    /// The clock must be a [`RealClock`]: a [`Policy::Queue`] whose timeout
    /// could never fire does not compile (see [`NoClock`]). Without a clock,
    /// use [`wait`](Admission::wait) or [`shed`](Admission::shed).
    ///
    /// Refuses ([`InvalidConfig`], naming the parameter) `max_in_flight == 0`
    /// and a [`Policy::Queue`] with `max_queue > 0` and a zero `timeout`.
    pub fn new(max_in_flight: usize, policy: Policy, clock: C) -> Result<Self, InvalidConfig> {
        Self::build(max_in_flight, policy, clock)
    }

    /// Like [`admit`](Self::admit), but gives up with
    /// [`Expired`](crate::error::Expired) at `deadline` if that comes before
    /// the queue timeout (an already-passed deadline fails at once).
    ///
    /// Only for a [`RealClock`]: with [`NoClock`] the deadline could never fire.
    pub fn admit_before(&self, deadline: Instant) -> Admit<C> {
        Admit::new(self.clone(), Some(deadline))
    }
}

impl<C: Clock> Admission<C> {
    /// The one constructor: callers guarantee that `clock` can arm every
    /// timer `policy` needs (a [`RealClock`], or a policy without timers).
    pub(crate) fn build(
        max_in_flight: usize,
        policy: Policy,
        clock: C,
    ) -> Result<Self, InvalidConfig> {
        let policy = policy.validate(max_in_flight)?;
        Ok(Self::from_valid(max_in_flight, policy, clock))
    }

    /// [`build`](Self::build) for a limit and policy validated before.
    pub(crate) fn from_valid(max_in_flight: usize, policy: Policy, clock: C) -> Self {
        Self {
            shared: Arc::new(Shared {
                semaphore: Semaphore::new(max_in_flight),
                policy,
                counters: Counters::default(),
            }),
            clock,
        }
    }

    /// Waits for admission according to the policy.
    pub fn admit(&self) -> Admit<C> {
        Admit::new(self.clone(), None)
    }

    /// Admits without waiting, whatever the policy: `None` when full or closed.
    /// A refusal is not counted as shed.
    #[inline]
    pub fn try_admit(&self) -> Option<Permit> {
        let permit = self.shared.semaphore.try_acquire().ok()?;
        self.shared
            .counters
            .admitted
            .fetch_add(1, Ordering::Relaxed);
        Some(permit)
    }

    /// The first step of admission, run synchronously: admitted, rejected, or
    /// a [`Queued`] wait to poll.
    pub(crate) fn decide(&self, deadline: Option<Instant>) -> Decision<C::Sleep> {
        let shared = &self.shared;
        let now = deadline.map(|_| self.clock.now());
        if let (Some(deadline), Some(now)) = (deadline, now) {
            if deadline <= now {
                shared.counters.expired.fetch_add(1, Ordering::Relaxed);
                return Decision::Rejected(AdmitError::Expired);
            }
        }
        match shared.semaphore.try_acquire() {
            Ok(permit) => {
                shared.counters.admitted.fetch_add(1, Ordering::Relaxed);
                Decision::Admitted(permit)
            }
            Err(TryAcquireError::Closed) => Decision::Rejected(AdmitError::Closed),
            Err(TryAcquireError::NoPermits) => match shared.policy {
                Policy::Shed => {
                    shared.counters.shed.fetch_add(1, Ordering::Relaxed);
                    Decision::Rejected(AdmitError::Overloaded(crate::error::Overloaded::new()))
                }
                Policy::Wait => Decision::Queued(Queued::new(
                    Arc::clone(shared),
                    usize::MAX,
                    deadline.map(|at| (self.clock.sleep_until(at), true)),
                )),
                Policy::Queue { max_queue: 0, .. } => {
                    shared.counters.shed.fetch_add(1, Ordering::Relaxed);
                    Decision::Rejected(AdmitError::Overloaded(crate::error::Overloaded::new()))
                }
                Policy::Queue { max_queue, timeout } => {
                    let now = now.unwrap_or_else(|| self.clock.now());
                    let queue_end = now + timeout;
                    let timer = match deadline {
                        Some(at) if at <= queue_end => (self.clock.sleep_until(at), true),
                        _ => (self.clock.sleep_until(queue_end), false),
                    };
                    Decision::Queued(Queued::new(Arc::clone(shared), max_queue, Some(timer)))
                }
            },
        }
    }

    /// Whether [`decide`](Self::decide) without a deadline would queue a
    /// request that found no free permit (rather than reject it): the
    /// semaphore is open and the policy waits, or its queue has room.
    pub(crate) fn would_queue(&self) -> bool {
        let semaphore = &self.shared.semaphore;
        !semaphore.is_closed()
            && match self.shared.policy {
                Policy::Wait => true,
                Policy::Shed => false,
                Policy::Queue { max_queue, .. } => max_queue > semaphore.waiters(),
            }
    }

    /// A snapshot of the limit, the queue and the counters.
    ///
    /// `in_flight`, `queued` and `limit` are read together, under one lock
    /// acquisition, so they all held at one instant: `queued > 0` implies
    /// `in_flight >= limit`, and `in_flight > limit` only for a while after
    /// [`set_limit`](Semaphore::set_limit) lowered the limit below the permits
    /// out (they are retired as they come back). The counters are read just
    /// after; each only ever grows, and one may trail `in_flight` by a
    /// request that is being admitted at that very moment.
    pub fn stats(&self) -> Stats {
        let shared = &self.shared;
        let now = shared.semaphore.snapshot();
        Stats {
            in_flight: now.in_use,
            queued: now.waiters,
            limit: now.limit,
            admitted: shared.counters.admitted.load(Ordering::Relaxed),
            shed: shared.counters.shed.load(Ordering::Relaxed),
            queue_timeouts: shared.counters.queue_timeouts.load(Ordering::Relaxed),
            expired: shared.counters.expired.load(Ordering::Relaxed),
        }
    }

    /// The policy applied when the limit is reached.
    pub fn policy(&self) -> Policy {
        self.shared.policy
    }

    /// The state shared by the clones.
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// The clock that arms this admission's timers.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The semaphore underneath, e.g. to [`set_limit`](Semaphore::set_limit)
    /// from an adaptive controller or to [`close`](Semaphore::close) on shutdown.
    pub fn semaphore(&self) -> &Semaphore {
        &self.shared.semaphore
    }
}
