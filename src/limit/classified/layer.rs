use super::service::ClassifiedLimit;
use crate::admission::{Admission, Unclassified};
use crate::limit::concurrency::{HoldInResponse, ReleaseOnCompletion};
use crate::time::Clock;
use core::fmt;
use core::marker::PhantomData;
use tower_layer::Layer;

/// Wraps services in a [`ClassifiedLimit`] that admits every request
/// through one shared [`Admission`], as the request's
/// [`Call`](crate::admission::Call) says.
///
/// [`new`](Self::new) treats every request as a default call without a key;
/// say how to read a request with [`read_call_with`](Self::read_call_with)
/// (a closure `Fn(&Request) -> Call`, or any [`ReadCall`](crate::admission::ReadCall)),
/// or, with the `http` feature, `from_extensions()`.
pub struct ClassifiedLimitLayer<C: Clock, R = Unclassified, M = ReleaseOnCompletion> {
    admission: Admission<C>,
    read: R,
    _release: PhantomData<fn() -> M>,
}

impl<C: Clock> ClassifiedLimitLayer<C> {
    /// Admits every request through `admission`.
    pub fn new(admission: Admission<C>) -> Self {
        Self {
            admission,
            read: Unclassified,
            _release: PhantomData,
        }
    }
}

impl<C: Clock, R, M> ClassifiedLimitLayer<C, R, M> {
    /// Reads each request's criticality and key with `read`.
    pub fn read_call_with<R2>(self, read: R2) -> ClassifiedLimitLayer<C, R2, M> {
        ClassifiedLimitLayer {
            admission: self.admission,
            read,
            _release: PhantomData,
        }
    }

    /// Reads each `http::Request`'s [`Criticality`](crate::admission::Criticality)
    /// and [`Key`](crate::Key) from its extensions (feature `http`).
    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    pub fn from_extensions(self) -> ClassifiedLimitLayer<C, crate::admission::FromExtensions, M> {
        self.read_call_with(crate::admission::FromExtensions)
    }

    /// Responses carry their permit, see [`ConcurrencyLimitLayer::hold_permit_in_response`](crate::limit::ConcurrencyLimitLayer::hold_permit_in_response).
    pub fn hold_permit_in_response(self) -> ClassifiedLimitLayer<C, R, HoldInResponse> {
        self.release_with()
    }

    /// The permit moves into the `http::Response`'s body, see
    /// [`ConcurrencyLimitLayer::hold_permit_in_body`](crate::limit::ConcurrencyLimitLayer::hold_permit_in_body).
    #[cfg(feature = "http-body")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http-body")))]
    pub fn hold_permit_in_body(self) -> ClassifiedLimitLayer<C, R, crate::http_body::HoldInBody> {
        self.release_with()
    }

    fn release_with<N>(self) -> ClassifiedLimitLayer<C, R, N> {
        ClassifiedLimitLayer {
            admission: self.admission,
            read: self.read,
            _release: PhantomData,
        }
    }

    /// The shared admission limit.
    pub fn admission(&self) -> &Admission<C> {
        &self.admission
    }
}

impl<S, C: Clock, R: Clone, M> Layer<S> for ClassifiedLimitLayer<C, R, M> {
    type Service = ClassifiedLimit<S, C, R, M>;

    fn layer(&self, inner: S) -> Self::Service {
        ClassifiedLimit::new(inner, self.admission.clone(), self.read.clone())
    }
}

impl<C: Clock, R: Clone, M> Clone for ClassifiedLimitLayer<C, R, M> {
    fn clone(&self) -> Self {
        Self {
            admission: self.admission.clone(),
            read: self.read.clone(),
            _release: PhantomData,
        }
    }
}

impl<C: Clock + fmt::Debug, R, M> fmt::Debug for ClassifiedLimitLayer<C, R, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClassifiedLimitLayer")
            .field("admission", &self.admission)
            .finish_non_exhaustive()
    }
}
