use super::service::ConcurrencyLimit;
use crate::admission::Admission;
use crate::release::{HoldInResponse, ReleaseOnCompletion};
use crate::time::{Clock, NoClock};
use core::fmt;
use core::marker::PhantomData;
use tower_layer::Layer;

/// Wraps every service in a [`ConcurrencyLimit`] that shares **one** limit:
/// the total in flight across all of them stays within it.
///
/// [`ConcurrencyLimitLayer`](super::ConcurrencyLimitLayer) shares its limit
/// the same way; this layer is for an [`Admission`] built elsewhere (one
/// that a JS binding, a stats endpoint or several stacks also use).
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
    /// Responses carry their permit, see [`ConcurrencyLimitLayer::hold_permit_in_response`](crate::limit::ConcurrencyLimitLayer::hold_permit_in_response).
    pub fn hold_permit_in_response(self) -> GlobalConcurrencyLimitLayer<C, HoldInResponse> {
        GlobalConcurrencyLimitLayer {
            admission: self.admission,
            _release: PhantomData,
        }
    }

    /// The permit moves into the `http::Response`'s body, see
    /// [`ConcurrencyLimitLayer::hold_permit_in_body`](crate::limit::ConcurrencyLimitLayer::hold_permit_in_body).
    #[cfg(feature = "http-body")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http-body")))]
    pub fn hold_permit_in_body(
        self,
    ) -> GlobalConcurrencyLimitLayer<C, crate::http_body::HoldInBody> {
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
