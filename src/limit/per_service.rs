//! A limit layer that gives each service it wraps a limit of its own.

use core::fmt;

/// A limit layer that builds a **separate** limit for every service it
/// wraps, as tower's `ConcurrencyLimitLayer` does: what
/// [`ConcurrencyLimitLayer::per_service`](super::ConcurrencyLimitLayer::per_service)
/// and [`AdaptiveLimitLayer::per_service`](super::AdaptiveLimitLayer::per_service)
/// return.
///
/// Each service's limit is its own `admission()`. Where a framework calls
/// `Layer::layer` once per connection (axum's `Router::layer` under
/// `axum::serve`), that is one limit per connection: use the shared layer
/// there.
///
/// ```
/// use edgeshed::limit::ConcurrencyLimitLayer;
/// use tower_layer::Layer;
///
/// let echo = tower::service_fn(|x: u32| async move { Ok::<_, std::convert::Infallible>(x) });
/// let per_backend = ConcurrencyLimitLayer::new(2).unwrap().per_service();
/// let a = per_backend.layer(echo);
/// let b = per_backend.layer(echo);
/// let _held = a.admission().try_admit();
/// assert_eq!(a.admission().stats().in_flight, 1);
/// assert_eq!(b.admission().stats().in_flight, 0); // b has a limit of its own
/// ```
#[derive(Clone)]
pub struct PerService<L> {
    layer: L,
}

impl<L> PerService<L> {
    pub(crate) fn new(layer: L) -> Self {
        Self { layer }
    }

    /// The layer whose configuration every service gets a copy of.
    pub(crate) fn get_ref(&self) -> &L {
        &self.layer
    }
}

impl<L: fmt::Debug> fmt::Debug for PerService<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PerService").field(&self.layer).finish()
    }
}
