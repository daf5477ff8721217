use super::classify::DefaultClassify;
use super::controller::Controller;
use super::service::{AdaptiveLimit, Sampled};
use super::Limit;
use crate::admission::{Admission, Policy};
use crate::error::InvalidConfig;
use crate::limit::concurrency::{HoldInResponse, ReleaseOnCompletion};
use crate::limit::{ConcurrencyLimit, PerService};
use crate::time::{NoClock, RealClock};
use core::fmt;
use core::marker::PhantomData;
use core::time::Duration;
use std::sync::{Arc, OnceLock};
use tower_layer::Layer;

/// An adaptive concurrency limit as a layer: a limit that a [`Limit`]
/// algorithm moves, one sample per call, shared by **every** service this
/// layer wraps and every clone of it (as
/// [`ConcurrencyLimitLayer`](crate::limit::ConcurrencyLimitLayer) is).
///
/// The limit and its algorithm are created once, when the layer first
/// wraps a service, so axum's `Router::layer` under `axum::serve` (which
/// wraps the routes again for each connection) gets one limit that learns
/// from all its traffic. [`per_service`](Self::per_service) gives each
/// wrapped service a limit and an algorithm of its own instead.
///
/// The same builder as [`ConcurrencyLimitLayer`](crate::limit::ConcurrencyLimitLayer),
/// with the algorithm as a value instead of a number. Timing calls needs a
/// clock, so it is a layer only once [`clock`](Self::clock) gave it a
/// [`RealClock`] (`TokioClock` with the `tokio` feature).
///
/// | builder | when the current limit is reached |
/// |---|---|
/// | `new(algorithm).clock(c)` | wait, FIFO, unbounded |
/// | `new(algorithm).shed_when_full().clock(c)` | reject at once with `Overloaded` |
/// | `new(algorithm).queue(max_queue, timeout)?.clock(c)` | wait, bounded in length and time |
///
/// Each call is timed from admission (the permit is held) to the inner
/// future's completion and classified by [`Classify`](super::Classify):
/// by default an inner error is a drop, an `Overloaded` from an edgeshed
/// layer inside this one too, and an `Expired` (the caller's deadline) is
/// ignored. Calls refused by this limit itself never reach the origin and
/// give no sample; nor do calls whose future is dropped (cancelled).
/// With `hold_permit_in_body` (feature `http-body`) a call's permit is
/// held until its body ends, and the call is timed until then too
/// ([`SampleEnd`](super::SampleEnd)).
///
/// ```compile_fail
/// use edgeshed::limit::adaptive::{AdaptiveLimitLayer, Aimd};
/// use tower_layer::Layer;
///
/// let echo = tower::service_fn(|x: u32| async move { Ok::<_, std::convert::Infallible>(x) });
/// let service = AdaptiveLimitLayer::new(Aimd::default()).layer(echo); // error: no clock to time calls
/// ```
pub struct AdaptiveLimitLayer<L, C = NoClock, D = DefaultClassify, M = ReleaseOnCompletion> {
    algorithm: L,
    policy: Policy,
    clock: C,
    classify: D,
    /// The limit shared by every service built from this layer, created
    /// when the first one is.
    shared: Arc<OnceLock<SharedLimit<L, C>>>,
    _release: PhantomData<fn() -> M>,
}

/// The state of one adaptive limit: the admission and what moves it.
struct SharedLimit<L, C> {
    admission: Admission<C>,
    controller: Controller<L>,
}

impl<L: Limit> AdaptiveLimitLayer<L> {
    /// Callers wait (FIFO) when the current limit is reached, as in tower.
    pub fn new(algorithm: L) -> Self {
        Self::configured(algorithm, Policy::Wait, NoClock, DefaultClassify)
    }
}

impl<L, C, D, M> AdaptiveLimitLayer<L, C, D, M> {
    /// A layer with a limit of its own (not yet created).
    fn configured(algorithm: L, policy: Policy, clock: C, classify: D) -> Self {
        Self {
            algorithm,
            policy,
            clock,
            classify,
            shared: Arc::new(OnceLock::new()),
            _release: PhantomData,
        }
    }

    /// The same limit, with another way to release its permits.
    fn release_with<M2>(self) -> AdaptiveLimitLayer<L, C, D, M2> {
        AdaptiveLimitLayer {
            algorithm: self.algorithm,
            policy: self.policy,
            clock: self.clock,
            classify: self.classify,
            shared: self.shared,
            _release: PhantomData,
        }
    }
}

impl<L: Limit, C, D, M> AdaptiveLimitLayer<L, C, D, M> {
    /// Rejects at once with `Overloaded` when the current limit is reached.
    /// A new limit: services built from the layer before do not share it.
    pub fn shed_when_full(self) -> Self {
        Self::configured(self.algorithm, Policy::Shed, self.clock, self.classify)
    }

    /// A bounded queue: at most `max_queue` requests wait (FIFO), each for
    /// at most `timeout`. Refuses a zero `timeout` when `max_queue > 0`.
    /// A new limit, as with [`shed_when_full`](Self::shed_when_full).
    pub fn queue(self, max_queue: usize, timeout: Duration) -> Result<Self, InvalidConfig> {
        let initial = self.algorithm.limit();
        let policy = Policy::Queue { max_queue, timeout }.validate(initial)?;
        Ok(Self::configured(
            self.algorithm,
            policy,
            self.clock,
            self.classify,
        ))
    }

    /// The clock that times calls and arms the queue timeouts (a new limit).
    pub fn clock<C2: RealClock>(self, clock: C2) -> AdaptiveLimitLayer<L, C2, D, M> {
        AdaptiveLimitLayer::configured(self.algorithm, self.policy, clock, self.classify)
    }

    /// How completed calls count: served, dropped or ignored (see
    /// [`Classify`](super::Classify)). The limit stays the same.
    pub fn classify<D2>(self, classify: D2) -> AdaptiveLimitLayer<L, C, D2, M> {
        AdaptiveLimitLayer {
            algorithm: self.algorithm,
            policy: self.policy,
            clock: self.clock,
            classify,
            shared: self.shared,
            _release: PhantomData,
        }
    }

    /// Responses carry their permit, see
    /// [`ConcurrencyLimitLayer::hold_permit_in_response`](crate::limit::ConcurrencyLimitLayer::hold_permit_in_response).
    pub fn hold_permit_in_response(self) -> AdaptiveLimitLayer<L, C, D, HoldInResponse> {
        self.release_with()
    }

    /// For `http::Response`s: the permit moves into the body and is returned
    /// when the body ends, fails or is dropped (the client went away); the
    /// call is timed to the body's end as well (`SampledBody`). See
    /// [`ConcurrencyLimitLayer::hold_permit_in_body`](crate::limit::ConcurrencyLimitLayer::hold_permit_in_body).
    #[cfg(feature = "http-body")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http-body")))]
    pub fn hold_permit_in_body(self) -> AdaptiveLimitLayer<L, C, D, crate::http_body::HoldInBody> {
        self.release_with()
    }

    /// The policy applied when the limit is reached.
    pub fn policy(&self) -> Policy {
        self.policy
    }
}

impl<L: Limit + Clone, C: RealClock, D, M> AdaptiveLimitLayer<L, C, D, M> {
    /// The limit shared by every service this layer wraps (`stats().limit`
    /// is its current value).
    pub fn admission(&self) -> &Admission<C> {
        &self.limit().admission
    }

    /// The controller that moves the shared limit.
    pub fn controller(&self) -> &Controller<L> {
        &self.limit().controller
    }

    /// A separate adaptive limit, with its own algorithm state, for each
    /// service this layer wraps (see [`PerService`]).
    pub fn per_service(self) -> PerService<Self> {
        PerService::new(self)
    }

    fn limit(&self) -> &SharedLimit<L, C> {
        self.shared.get_or_init(|| self.fresh_limit())
    }

    /// A new limit with this layer's configuration, shared with nothing.
    fn fresh_limit(&self) -> SharedLimit<L, C> {
        let initial = self.algorithm.limit();
        // The policy was validated against a limit of at least 1.
        let admission = Admission::from_valid(initial, self.policy, self.clock.clone());
        let controller = Controller::new(self.algorithm.clone(), admission.semaphore().clone());
        SharedLimit {
            admission,
            controller,
        }
    }

    fn wrap<S>(&self, inner: S, limit: &SharedLimit<L, C>) -> AdaptiveLimit<S, L, C, D, M>
    where
        D: Clone,
    {
        let controller = limit.controller.clone();
        let sampled =
            Sampled::ending_as(inner, controller, self.clock.clone(), self.classify.clone());
        ConcurrencyLimit::with_admission(sampled, limit.admission.clone())
    }
}

impl<S, L, C, D, M> Layer<S> for AdaptiveLimitLayer<L, C, D, M>
where
    L: Limit + Clone,
    C: RealClock,
    D: Clone,
{
    type Service = AdaptiveLimit<S, L, C, D, M>;

    fn layer(&self, inner: S) -> Self::Service {
        self.wrap(inner, self.limit())
    }
}

impl<S, L, C, D, M> Layer<S> for PerService<AdaptiveLimitLayer<L, C, D, M>>
where
    L: Limit + Clone,
    C: RealClock,
    D: Clone,
{
    type Service = AdaptiveLimit<S, L, C, D, M>;

    fn layer(&self, inner: S) -> Self::Service {
        let layer = self.get_ref();
        layer.wrap(inner, &layer.fresh_limit())
    }
}

impl<L: Clone, C: Clone, D: Clone, M> Clone for AdaptiveLimitLayer<L, C, D, M> {
    /// The clone shares the limit.
    fn clone(&self) -> Self {
        Self {
            algorithm: self.algorithm.clone(),
            policy: self.policy,
            clock: self.clock.clone(),
            classify: self.classify.clone(),
            shared: Arc::clone(&self.shared),
            _release: PhantomData,
        }
    }
}

impl<L: fmt::Debug, C, D, M> fmt::Debug for AdaptiveLimitLayer<L, C, D, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AdaptiveLimitLayer")
            .field("algorithm", &self.algorithm)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}
