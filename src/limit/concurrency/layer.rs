use super::service::ConcurrencyLimit;
use crate::admission::{Admission, Policy};
use crate::error::InvalidConfig;
use crate::limit::PerService;
use crate::release::{HoldInResponse, ReleaseOnCompletion};
use crate::time::{Clock, NoClock, RealClock};
use core::fmt;
use core::marker::PhantomData;
use core::time::Duration;
use tower_layer::Layer;

/// A concurrency limit as a layer: every service this layer wraps, and every
/// clone of it, shares **one** limit of `max_in_flight`.
///
/// The layer *is* the limit: it is created with the layer, so a framework
/// that calls [`Layer::layer`] again for each connection or each route
/// (axum's `Router::layer` under `axum::serve` does both) still gets the one
/// limit it configured, and [`admission`](Self::admission) shows it. For
/// tower's semantics, a separate limit for each wrapped service, say
/// [`per_service`](Self::per_service).
///
/// A builder: start with [`new`](Self::new) (callers wait, as in tower),
/// then choose what happens when the limit is reached. Each parameter has a
/// name, so two counts cannot be swapped silently, and each constructor
/// refuses what cannot work ([`InvalidConfig`]: a zero limit, a zero queue
/// timeout) instead of building a limiter that sheds everything.
///
/// | builder | when `max_in_flight` requests are in flight |
/// |---|---|
/// | `new(n)?` | wait, FIFO, unbounded (tower's `ConcurrencyLimit`) |
/// | `new(n)?.shed_when_full()` or `shed(n)?` | reject at once with `Overloaded`, counted in `stats().shed` |
/// | `new(n)?.queue(max_queue, timeout)?.clock(clock)` | wait, at most `max_queue` waiters for at most `timeout` each |
///
/// ```
/// use edgeshed::limit::ConcurrencyLimitLayer;
/// use edgeshed::time::ManualClock;
/// use std::time::Duration;
///
/// # fn main() -> Result<(), edgeshed::error::InvalidConfig> {
/// let clock = ManualClock::new(); // `edgeshed::time::TokioClock` on tokio
/// let waits = ConcurrencyLimitLayer::new(6)?;
/// let sheds = ConcurrencyLimitLayer::new(6)?.shed_when_full();
/// let queues = ConcurrencyLimitLayer::new(6)?
///     .queue(12, Duration::from_millis(20))?
///     .clock(clock);
/// # let _ = (waits, sheds, queues);
/// # Ok(())
/// # }
/// ```
///
/// A queue is not a layer until it has a clock, and the clock must be a
/// [`RealClock`]: a queue timeout that could never fire does not compile.
///
/// ```compile_fail
/// use edgeshed::limit::ConcurrencyLimitLayer;
/// use tower_layer::Layer;
/// use std::time::Duration;
///
/// let echo = tower::service_fn(|x: u32| async move { Ok::<_, std::convert::Infallible>(x) });
/// let queue = ConcurrencyLimitLayer::new(6).unwrap().queue(12, Duration::from_millis(20)).unwrap();
/// let service = queue.layer(echo); // error: `NeedsClock` is not a layer
/// ```
///
/// ```compile_fail
/// use edgeshed::limit::ConcurrencyLimitLayer;
/// use edgeshed::time::NoClock;
/// use std::time::Duration;
///
/// let queue = ConcurrencyLimitLayer::new(6).unwrap().queue(12, Duration::from_millis(20)).unwrap();
/// let layer = queue.clock(NoClock); // error: `NoClock` is not a `RealClock`
/// ```
pub struct ConcurrencyLimitLayer<C = NoClock, M = ReleaseOnCompletion> {
    max_in_flight: usize,
    policy: Policy,
    clock: C,
    /// The limit shared by every service built from this layer.
    shared: Admission<C>,
    _release: PhantomData<fn() -> M>,
}

impl ConcurrencyLimitLayer {
    /// At most `max_in_flight` at once; the rest wait (FIFO), as in tower.
    /// Refuses `max_in_flight == 0`.
    pub fn new(max_in_flight: usize) -> Result<Self, InvalidConfig> {
        Self::build(max_in_flight, Policy::Wait, NoClock)
    }

    /// At most `max_in_flight` at once; the rest fail at once with
    /// `Overloaded`. The same as `new(max_in_flight)?.shed_when_full()`.
    pub fn shed(max_in_flight: usize) -> Result<Self, InvalidConfig> {
        Self::build(max_in_flight, Policy::Shed, NoClock)
    }
}

impl<M> ConcurrencyLimitLayer<NoClock, M> {
    /// A bounded queue: at most `max_queue` requests wait (FIFO), each for at
    /// most `timeout`; the rest fail with `Overloaded`. `max_queue: 0` sheds.
    ///
    /// Refuses a zero `timeout` when `max_queue > 0`. The result is not a
    /// layer yet: give it the clock that arms the timeouts with
    /// [`NeedsClock::clock`].
    pub fn queue(
        self,
        max_queue: usize,
        timeout: Duration,
    ) -> Result<NeedsClock<M>, InvalidConfig> {
        let policy = Policy::Queue { max_queue, timeout }.validate(self.max_in_flight)?;
        Ok(NeedsClock {
            max_in_flight: self.max_in_flight,
            policy,
            _release: PhantomData,
        })
    }
}

impl<C: RealClock> ConcurrencyLimitLayer<C> {
    /// Any [`Policy`], with the [`RealClock`] that arms its timers; refuses
    /// what [`Admission::new`] refuses.
    pub fn with_policy(
        max_in_flight: usize,
        policy: Policy,
        clock: C,
    ) -> Result<Self, InvalidConfig> {
        Self::build(max_in_flight, policy, clock)
    }
}

impl<C: Clock> ConcurrencyLimitLayer<C> {
    /// Callers guarantee that `clock` can arm every timer `policy` needs.
    fn build(max_in_flight: usize, policy: Policy, clock: C) -> Result<Self, InvalidConfig> {
        Ok(Self::from_valid(
            max_in_flight,
            policy.validate(max_in_flight)?,
            clock,
        ))
    }
}

impl<C: Clock, M> ConcurrencyLimitLayer<C, M> {
    /// A layer with a new limit; `policy` was validated for `max_in_flight`.
    fn from_valid(max_in_flight: usize, policy: Policy, clock: C) -> Self {
        Self {
            max_in_flight,
            policy,
            shared: Admission::from_valid(max_in_flight, policy, clock.clone()),
            clock,
            _release: PhantomData,
        }
    }

    /// The limit shared by every service this layer wraps: its stats, or
    /// `semaphore().set_limit(n)` to change it at run time.
    pub fn admission(&self) -> &Admission<C> {
        &self.shared
    }

    /// A separate limit of `max_in_flight` for each service this layer
    /// wraps, as tower's `ConcurrencyLimitLayer` does: for one layer applied
    /// to several backends that should each get their own. Under axum's
    /// `Router::layer` that is one limit per connection and route, which is
    /// rarely what an app wants.
    pub fn per_service(self) -> PerService<Self> {
        PerService::new(self)
    }

    /// A new limit with this layer's configuration, shared with nothing.
    pub(crate) fn fresh_admission(&self) -> Admission<C> {
        // Validated when this layer was built.
        Admission::from_valid(self.max_in_flight, self.policy, self.clock.clone())
    }
}

impl<C: Clock, M> ConcurrencyLimitLayer<C, M> {
    /// Rejects at once with `Overloaded` when the limit is reached, counted
    /// in [`Stats::shed`](crate::admission::Stats::shed).
    ///
    /// This is what tower users get from `LoadShed` over `ConcurrencyLimit`,
    /// without its pitfalls: no parked waiter left behind, the rejections are
    /// counted, and nothing else in the stack is mistaken for overload. (A
    /// [`LoadShed`](crate::load_shed::LoadShed) put outside a queueing limit
    /// turns its queue off; see [`load_shed`](crate::load_shed).)
    ///
    /// This is a new limit: services built from the layer before it do not
    /// share it.
    pub fn shed_when_full(self) -> ConcurrencyLimitLayer<C, M> {
        Self::from_valid(self.max_in_flight, Policy::Shed, self.clock)
    }

    /// Responses carry their permit ([`Permitted`](super::Permitted)) and
    /// return it when dropped, e.g. after a streamed body has been sent.
    pub fn hold_permit_in_response(self) -> ConcurrencyLimitLayer<C, HoldInResponse> {
        self.release_with()
    }

    /// For `http::Response`s: the permit moves into the body
    /// ([`PermitBody`](crate::http_body::PermitBody)) and is returned when the
    /// body ends, fails or is dropped (the client went away).
    #[cfg(feature = "http-body")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http-body")))]
    pub fn hold_permit_in_body(self) -> ConcurrencyLimitLayer<C, crate::http_body::HoldInBody> {
        self.release_with()
    }

    /// The same limit, with another way to release its permits.
    fn release_with<N>(self) -> ConcurrencyLimitLayer<C, N> {
        ConcurrencyLimitLayer {
            max_in_flight: self.max_in_flight,
            policy: self.policy,
            clock: self.clock,
            shared: self.shared,
            _release: PhantomData,
        }
    }
}

/// A [`ConcurrencyLimitLayer`] with a bounded queue that still needs the
/// clock to arm its timeouts: not a layer until [`clock`](Self::clock).
pub struct NeedsClock<M = ReleaseOnCompletion> {
    max_in_flight: usize,
    policy: Policy,
    _release: PhantomData<fn() -> M>,
}

impl<M> NeedsClock<M> {
    /// The layer, with `clock` arming the queue timeouts. It must be a
    /// [`RealClock`]: with [`NoClock`] this does not compile.
    pub fn clock<C: RealClock>(self, clock: C) -> ConcurrencyLimitLayer<C, M> {
        ConcurrencyLimitLayer::from_valid(self.max_in_flight, self.policy, clock)
    }
}

impl<M> fmt::Debug for NeedsClock<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NeedsClock")
            .field("max_in_flight", &self.max_in_flight)
            .field("policy", &self.policy)
            .finish()
    }
}

impl<S, C: Clock, M> Layer<S> for ConcurrencyLimitLayer<C, M> {
    type Service = ConcurrencyLimit<S, C, M>;

    fn layer(&self, inner: S) -> Self::Service {
        ConcurrencyLimit::with_admission(inner, self.shared.clone())
    }
}

impl<S, C: Clock, M> Layer<S> for PerService<ConcurrencyLimitLayer<C, M>> {
    type Service = ConcurrencyLimit<S, C, M>;

    fn layer(&self, inner: S) -> Self::Service {
        ConcurrencyLimit::with_admission(inner, self.get_ref().fresh_admission())
    }
}

impl<C: Clone, M> Clone for ConcurrencyLimitLayer<C, M> {
    /// The clone shares the limit.
    fn clone(&self) -> Self {
        Self {
            max_in_flight: self.max_in_flight,
            policy: self.policy,
            clock: self.clock.clone(),
            shared: self.shared.clone(),
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
