use super::service::Deadline;
use super::stamp::NoStamp;
use crate::time::RealClock;
use core::time::Duration;
use tower_layer::Layer;

/// Wraps services in [`Deadline`].
#[derive(Clone, Debug)]
pub struct DeadlineLayer<C, F = NoStamp> {
    budget: Duration,
    clock: C,
    stamp: F,
}

impl<C: RealClock> DeadlineLayer<C> {
    /// Each request gets `budget` from when it first waits for readiness (or
    /// from `call` when no wait was needed, see [`Deadline`](super::Deadline)), on `clock`
    /// (a [`RealClock`]: a deadline that could never fire does not compile).
    pub fn new(budget: Duration, clock: C) -> Self {
        Self {
            budget,
            clock,
            stamp: NoStamp,
        }
    }
}

impl<C, F> DeadlineLayer<C, F> {
    /// Writes each request's absolute deadline into it with `stamp`
    /// (see [`Stamp`](super::Stamp)).
    pub fn stamp_with<G>(self, stamp: G) -> DeadlineLayer<C, G> {
        DeadlineLayer {
            budget: self.budget,
            clock: self.clock,
            stamp,
        }
    }
}

impl<S, C: RealClock, F: Clone> Layer<S> for DeadlineLayer<C, F> {
    type Service = Deadline<S, C, F>;

    fn layer(&self, inner: S) -> Self::Service {
        Deadline::with_stamp(inner, self.budget, self.clock.clone(), self.stamp.clone())
    }
}
