//! Admission control: a semaphore plus the policy applied when it is full.
//!
//! An [`Admission`] is the shared heart of every limiter in edgeshed — the
//! [`ConcurrencyLimit`](crate::limit::ConcurrencyLimit) middleware, the JS
//! `Limiter` and the worker's global and per-origin limits. It decides, for
//! each request, between three outcomes:
//!
//! * **admitted** — a [`Permit`] is handed out; dropping it frees the slot;
//! * **queued** — wait, bounded by the [`Policy`]: the most critical calls
//!   first, FIFO within a criticality (or codel, see [`QueueDiscipline`]);
//! * **rejected** — [`Overloaded`](crate::error::Overloaded) (503: shed,
//!   queue timeout or displaced), [`RateLimited`](crate::error::RateLimited)
//!   (429: over the key's fair share or rate), [`Expired`](crate::error::Expired)
//!   (504: the request's deadline passed while queued) or
//!   [`Closed`](crate::error::Closed).
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
//!
//! ## Criticality and fair share
//!
//! A call may say how much it matters ([`Criticality`]) and who it is for
//! (a [`Key`]), with [`Admission::admit_call`]. Under overload a
//! call is refused only when every call of a lower criticality would be
//! refused too: a [`Reserve`] keeps part of the limit for the higher ones,
//! the queue serves them first, and a full queue lets an arrival displace the
//! newest waiter of the lowest criticality below its own. A key that holds
//! more than its fair share (the limit divided by the keys with calls in
//! flight or waiting) while other keys wait is refused with
//! [`RateLimited`](crate::error::RateLimited) (429) instead of queued; a key
//! alone may use the whole limit.
//!
//! ```
//! use edgeshed::admission::{Admission, Call, Criticality, Options, Policy, Reserve};
//! use edgeshed::time::ManualClock;
//! use std::time::Duration;
//! # futures::executor::block_on(async {
//! let policy = Policy::queue(8, Duration::from_millis(100));
//! let options = Options::new().reserve(Reserve::default());
//! let admission = Admission::with_options(10, policy, options, ManualClock::new()).unwrap();
//!
//! // Batch traffic fills what it may: 7 of 10 slots.
//! let mut batch = Vec::new();
//! while let Some(permit) = admission.try_admit_as(Criticality::Sheddable) {
//!     batch.push(permit);
//! }
//! assert_eq!(batch.len(), 7);
//! // Checkout still gets in at once.
//! let checkout = admission.admit_call(Call::new(Criticality::Critical)).await.unwrap();
//! assert_eq!(admission.stats().by_criticality.critical.in_flight, 1);
//! # drop((batch, checkout));
//! # });
//! ```

mod admit;
mod admit_error;
mod decide;
mod options;
mod policy;
mod queued;
mod shared;
mod stats;
mod top_keys;
mod wait_model;

#[cfg(feature = "http")]
pub use crate::call::FromExtensions;
pub use crate::call::{Call, ReadCall, Unclassified};
pub use crate::criticality::{Criticality, Reserve, UnknownCriticality};
pub use crate::per_criticality::PerCriticality;
pub use admit::Admit;
pub use admit_error::AdmitError;
pub use options::{Options, QueueDiscipline, QueueWait};
pub use policy::Policy;
pub use stats::{ByCriticality, CriticalityStats, Stats};
pub use top_keys::RefusedKey;

pub(crate) use admit::Decision;
pub(crate) use queued::Queued;
pub(crate) use shared::Shared;

use crate::error::InvalidConfig;
use crate::rate_limit::RateLimiter;
use crate::semaphore::{Permit, Semaphore};
use crate::sync::Arc;
use crate::time::{Clock, Instant, NoClock, RealClock};
use crate::Key;
use stats::Counters;

/// A shared admission limit: at most `max_in_flight` permits out, and a
/// [`Policy`] for what happens to the rest.
///
/// Clones share the limit, the queue, the rate limit and the counters.
#[derive(Clone, Debug)]
pub struct Admission<C = NoClock> {
    shared: Arc<Shared>,
    clock: C,
    rate: Option<RateLimiter<C, Key>>,
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

    /// [`new`](Self::new) with [`Options`]: a reserve per criticality, a
    /// queue discipline, a rate limit. Also refuses a codel discipline without
    /// a bounded queue or with a target not shorter than the queue timeout.
    pub fn with_options(
        max_in_flight: usize,
        policy: Policy,
        options: Options,
        clock: C,
    ) -> Result<Self, InvalidConfig> {
        let policy = policy.validate(max_in_flight)?;
        let options = options.validate(policy)?;
        let queueing = (options.discipline, options.queue_wait);
        let mut admission = Self::from_parts(max_in_flight, policy, queueing, clock);
        if let (QueueDiscipline::Codel { target }, Policy::Queue { timeout, .. }) =
            (options.discipline, policy)
        {
            admission.semaphore().set_codel(target, timeout);
        }
        if let Some(reserve) = options.reserve {
            admission.set_reserve(reserve);
        }
        admission.rate = options
            .rate
            .map(|rate| RateLimiter::new(rate, admission.clock.clone()));
        Ok(admission)
    }

    /// Like [`admit`](Self::admit), but gives up with
    /// [`Expired`](crate::error::Expired) at `deadline` if that comes before
    /// the queue timeout (an already-passed deadline fails at once).
    ///
    /// Only for a [`RealClock`]: with [`NoClock`] the deadline could never fire.
    pub fn admit_before(&self, deadline: Instant) -> Admit<C> {
        Admit::new(self.clone(), Call::default(), Some(deadline))
    }

    /// [`admit_call`](Self::admit_call) with a deadline, as [`admit_before`](Self::admit_before).
    pub fn admit_call_before(&self, call: Call, deadline: Instant) -> Admit<C> {
        Admit::new(self.clone(), call, Some(deadline))
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
        let queueing = (QueueDiscipline::Fifo, QueueWait::Timeout);
        Self::from_parts(max_in_flight, policy, queueing, clock)
    }

    fn from_parts(
        max_in_flight: usize,
        policy: Policy,
        (discipline, queue_wait): (QueueDiscipline, QueueWait),
        clock: C,
    ) -> Self {
        Self {
            shared: Arc::new(Shared {
                semaphore: Semaphore::new(max_in_flight),
                policy,
                discipline,
                queue_wait,
                wait_model: crate::sync::Mutex::default(),
                counters: Counters::default(),
                top_refused: top_keys::TopRefused::default(),
                keyed_seen: crate::sync::AtomicUsize::new(0),
            }),
            clock,
            rate: None,
        }
    }

    /// Waits for admission according to the policy, as a default call
    /// without a key.
    pub fn admit(&self) -> Admit<C> {
        Admit::new(self.clone(), Call::default(), None)
    }

    /// Waits for admission of `call`: its criticality decides its reserve,
    /// its place in the queue and whom it may displace; its key its fair
    /// share and its rate limit.
    pub fn admit_call(&self, call: Call) -> Admit<C> {
        Admit::new(self.clone(), call, None)
    }

    /// Admits a default call without waiting, whatever the policy: `None`
    /// when full or closed. A refusal is not counted as shed. Always `None`
    /// with a rate limit (use [`admit_call`](Self::admit_call), which checks it).
    #[inline]
    pub fn try_admit(&self) -> Option<Permit> {
        self.try_admit_as(Criticality::Default)
    }

    /// [`try_admit`](Self::try_admit) for a call of `criticality` (without a key).
    #[inline]
    pub fn try_admit_as(&self, criticality: Criticality) -> Option<Permit> {
        if self.rate.is_some() {
            return None;
        }
        let permit = self.shared.semaphore.try_acquire_as(criticality).ok()?;
        self.shared.counters.admitted.add(criticality);
        Some(permit)
    }

    /// The keys refused most often (429s and 503s; at most 10, most first),
    /// counted in bounded memory whatever the number of keys: see
    /// [`RefusedKey`]. Calls without a key count as one key (`None`) once the
    /// admission has seen a keyed call.
    pub fn top_refused_keys(&self) -> Vec<RefusedKey> {
        self.shared.top_refused.top()
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
