use super::counter::ShedCounter;
use super::service::LoadShed;
use crate::admission::Admission;
use crate::time::Clock;
use tower_layer::Layer;

/// Wraps services in [`LoadShed`]; all of them (and their clones) count
/// their rejections in one [`ShedCounter`].
#[derive(Clone, Debug, Default)]
pub struct LoadShedLayer {
    counter: ShedCounter,
}

impl LoadShedLayer {
    /// A layer that sheds load when the inner service is not ready, with a
    /// count of its own ([`shed_count`](Self::shed_count)).
    pub fn new() -> Self {
        Self::default()
    }

    /// Like [`new`](Self::new), but the rejections are added to
    /// `admission`'s [`Stats::shed`](crate::admission::Stats::shed): for a
    /// `LoadShed` in front of a [`GlobalConcurrencyLimitLayer`](crate::limit::GlobalConcurrencyLimitLayer)
    /// (or anything else) sharing `admission`.
    pub fn counting_in<C: Clock>(admission: &Admission<C>) -> Self {
        Self {
            counter: ShedCounter::in_admission(admission),
        }
    }

    /// The requests rejected so far by the services of this layer.
    pub fn shed_count(&self) -> u64 {
        self.counter.get()
    }

    /// The counter the services of this layer share.
    pub fn counter(&self) -> &ShedCounter {
        &self.counter
    }
}

impl<S> Layer<S> for LoadShedLayer {
    type Service = LoadShed<S>;

    fn layer(&self, inner: S) -> LoadShed<S> {
        LoadShed::with_counter(inner, self.counter.clone())
    }
}
