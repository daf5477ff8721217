use super::release::{HoldInResponse, ReleaseOnCompletion};
use super::service::ConcurrencyLimit;
use crate::admission::{Admission, Policy};
use crate::time::{Clock, NoClock, RealClock};
use core::fmt;
use core::marker::PhantomData;
use core::time::Duration;
use tower_layer::Layer;

/// Wraps each service in its own [`ConcurrencyLimit`]: every service built
/// from this layer gets a separate limit of `max_in_flight`.
pub struct ConcurrencyLimitLayer<C = NoClock, M = ReleaseOnCompletion> {
    max_in_flight: usize,
    policy: Policy,
    clock: C,
    _release: PhantomData<fn() -> M>,
}

impl ConcurrencyLimitLayer {
    /// At most `max_in_flight` at once; the rest wait (FIFO), as in tower.
    pub fn new(max_in_flight: usize) -> Self {
        Self::build(max_in_flight, Policy::Wait, NoClock)
    }

    /// At most `max_in_flight` at once; the rest fail at once with `Overloaded`.
    pub fn shed(max_in_flight: usize) -> Self {
        Self::build(max_in_flight, Policy::Shed, NoClock)
    }
}

impl<C: RealClock> ConcurrencyLimitLayer<C> {
    /// At most `max_in_flight` at once; at most `max_queue` more wait, each
    /// for at most `timeout` measured on `clock`; the rest fail with `Overloaded`.
    ///
    /// `clock` must be a [`RealClock`]: with [`NoClock`] the timeout could
    /// never fire, and this does not compile.
    pub fn queue(max_in_flight: usize, max_queue: usize, timeout: Duration, clock: C) -> Self {
        Self::build(max_in_flight, Policy::Queue { max_queue, timeout }, clock)
    }

    /// Any [`Policy`], with the [`RealClock`] that arms its timers.
    pub fn with_policy(max_in_flight: usize, policy: Policy, clock: C) -> Self {
        Self::build(max_in_flight, policy, clock)
    }
}

impl<C: Clock> ConcurrencyLimitLayer<C> {
    /// Callers guarantee that `clock` can arm every timer `policy` needs.
    fn build(max_in_flight: usize, policy: Policy, clock: C) -> Self {
        Self {
            max_in_flight,
            policy,
            clock,
            _release: PhantomData,
        }
    }
}

impl<C, M> ConcurrencyLimitLayer<C, M> {
    /// Responses carry their permit ([`Permitted`](super::Permitted)) and
    /// return it when dropped, e.g. after a streamed body has been sent.
    pub fn hold_permit_in_response(self) -> ConcurrencyLimitLayer<C, HoldInResponse> {
        ConcurrencyLimitLayer {
            max_in_flight: self.max_in_flight,
            policy: self.policy,
            clock: self.clock,
            _release: PhantomData,
        }
    }
}

impl<S, C: Clock, M> Layer<S> for ConcurrencyLimitLayer<C, M> {
    type Service = ConcurrencyLimit<S, C, M>;

    fn layer(&self, inner: S) -> Self::Service {
        let admission = Admission::build(self.max_in_flight, self.policy, self.clock.clone());
        ConcurrencyLimit::with_admission(inner, admission)
    }
}

impl<C: Clone, M> Clone for ConcurrencyLimitLayer<C, M> {
    fn clone(&self) -> Self {
        Self {
            max_in_flight: self.max_in_flight,
            policy: self.policy,
            clock: self.clock.clone(),
            _release: PhantomData,
        }
    }
}

impl<C, M> fmt::Debug for ConcurrencyLimitLayer<C, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConcurrencyLimitLayer")
            .field("max_in_flight", &self.max_in_flight)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

/// Wraps every service in a [`ConcurrencyLimit`] that shares **one** limit:
/// the total in flight across all of them stays within it.
pub struct GlobalConcurrencyLimitLayer<C: Clock = NoClock, M = ReleaseOnCompletion> {
    admission: Admission<C>,
    _release: PhantomData<fn() -> M>,
}

impl<C: Clock> GlobalConcurrencyLimitLayer<C> {
    /// Shares `admission` among all services this layer wraps.
    pub fn new(admission: Admission<C>) -> Self {
        Self {
            admission,
            _release: PhantomData,
        }
    }
}

impl<C: Clock, M> GlobalConcurrencyLimitLayer<C, M> {
    /// Responses carry their permit, see [`ConcurrencyLimitLayer::hold_permit_in_response`].
    pub fn hold_permit_in_response(self) -> GlobalConcurrencyLimitLayer<C, HoldInResponse> {
        GlobalConcurrencyLimitLayer {
            admission: self.admission,
            _release: PhantomData,
        }
    }

    /// The shared admission limit.
    pub fn admission(&self) -> &Admission<C> {
        &self.admission
    }
}

impl<S, C: Clock, M> Layer<S> for GlobalConcurrencyLimitLayer<C, M> {
    type Service = ConcurrencyLimit<S, C, M>;

    fn layer(&self, inner: S) -> Self::Service {
        ConcurrencyLimit::with_admission(inner, self.admission.clone())
    }
}

impl<C: Clock, M> Clone for GlobalConcurrencyLimitLayer<C, M> {
    fn clone(&self) -> Self {
        Self {
            admission: self.admission.clone(),
            _release: PhantomData,
        }
    }
}

impl<C: Clock + fmt::Debug, M> fmt::Debug for GlobalConcurrencyLimitLayer<C, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GlobalConcurrencyLimitLayer")
            .field("admission", &self.admission)
            .finish()
    }
}
