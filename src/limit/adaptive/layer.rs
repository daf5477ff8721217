use super::classify::DefaultClassify;
use super::controller::Controller;
use super::service::{AdaptiveLimit, Sampled};
use super::Limit;
use crate::admission::{Admission, Policy};
use crate::error::InvalidConfig;
use crate::limit::ConcurrencyLimit;
use crate::time::{NoClock, RealClock};
use core::fmt;
use core::time::Duration;
use tower_layer::Layer;

/// Wraps each service in its own [`AdaptiveLimit`]: a concurrency limit
/// that a [`Limit`] algorithm moves, one sample per call.
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
///
/// ```compile_fail
/// use edgeshed::limit::adaptive::{AdaptiveLimitLayer, Aimd};
/// use tower_layer::Layer;
///
/// let echo = tower::service_fn(|x: u32| async move { Ok::<_, std::convert::Infallible>(x) });
/// let service = AdaptiveLimitLayer::new(Aimd::default()).layer(echo); // error: no clock to time calls
/// ```
pub struct AdaptiveLimitLayer<L, C = NoClock, D = DefaultClassify> {
    algorithm: L,
    policy: Policy,
    clock: C,
    classify: D,
}

impl<L: Limit> AdaptiveLimitLayer<L> {
    /// Callers wait (FIFO) when the current limit is reached, as in tower.
    pub fn new(algorithm: L) -> Self {
        Self {
            algorithm,
            policy: Policy::Wait,
            clock: NoClock,
            classify: DefaultClassify,
        }
    }
}

impl<L: Limit, C, D> AdaptiveLimitLayer<L, C, D> {
    /// Rejects at once with `Overloaded` when the current limit is reached.
    pub fn shed_when_full(self) -> Self {
        Self {
            policy: Policy::Shed,
            ..self
        }
    }

    /// A bounded queue: at most `max_queue` requests wait (FIFO), each for
    /// at most `timeout`. Refuses a zero `timeout` when `max_queue > 0`.
    pub fn queue(self, max_queue: usize, timeout: Duration) -> Result<Self, InvalidConfig> {
        let initial = self.algorithm.limit();
        let policy = Policy::Queue { max_queue, timeout }.validate(initial)?;
        Ok(Self { policy, ..self })
    }

    /// The clock that times calls and arms the queue timeouts.
    pub fn clock<C2: RealClock>(self, clock: C2) -> AdaptiveLimitLayer<L, C2, D> {
        AdaptiveLimitLayer {
            algorithm: self.algorithm,
            policy: self.policy,
            clock,
            classify: self.classify,
        }
    }

    /// How completed calls count: served, dropped or ignored (see [`Classify`](super::Classify)).
    pub fn classify<D2>(self, classify: D2) -> AdaptiveLimitLayer<L, C, D2> {
        AdaptiveLimitLayer {
            algorithm: self.algorithm,
            policy: self.policy,
            clock: self.clock,
            classify,
        }
    }

    /// The policy applied when the limit is reached.
    pub fn policy(&self) -> Policy {
        self.policy
    }
}

impl<S, L, C, D> Layer<S> for AdaptiveLimitLayer<L, C, D>
where
    L: Limit + Clone,
    C: RealClock,
    D: Clone,
{
    type Service = AdaptiveLimit<S, L, C, D>;

    fn layer(&self, inner: S) -> Self::Service {
        let initial = self.algorithm.limit();
        // The policy was validated against a limit of at least 1.
        let admission = Admission::from_valid(initial, self.policy, self.clock.clone());
        let controller = Controller::new(self.algorithm.clone(), admission.semaphore().clone());
        let sampled = Sampled::new(inner, controller, self.clock.clone(), self.classify.clone());
        ConcurrencyLimit::with_admission(sampled, admission)
    }
}

impl<L: Clone, C: Clone, D: Clone> Clone for AdaptiveLimitLayer<L, C, D> {
    fn clone(&self) -> Self {
        Self {
            algorithm: self.algorithm.clone(),
            policy: self.policy,
            clock: self.clock.clone(),
            classify: self.classify.clone(),
        }
    }
}

impl<L: fmt::Debug, C, D> fmt::Debug for AdaptiveLimitLayer<L, C, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AdaptiveLimitLayer")
            .field("algorithm", &self.algorithm)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}
