//! [`Oneshot`]: drive a service's readiness, then call it once — for the
//! layers that admit per request inside their response future (the inner
//! service is reached only once the request's admission is decided).

use core::future::Future;
use core::pin::Pin;
use core::task::{ready, Context, Poll};
use pin_project_lite::pin_project;
use tower_service::Service;

pin_project! {
    /// Waits for `service` to be ready, calls it with `request`, and
    /// resolves to the response.
    #[project = OneshotProj]
    pub(crate) enum Oneshot<S: Service<Request>, Request> {
        Ready { service: S, request: Option<Request> },
        Called { #[pin] future: S::Future },
    }
}

impl<S: Service<Request>, Request> Oneshot<S, Request> {
    pub(crate) fn new(service: S, request: Request) -> Self {
        Self::Ready {
            service,
            request: Some(request),
        }
    }
}

impl<S: Service<Request>, Request> Future for Oneshot<S, Request> {
    type Output = Result<S::Response, S::Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            match self.as_mut().project() {
                OneshotProj::Ready { service, request } => {
                    ready!(service.poll_ready(cx))?;
                    let Some(request) = request.take() else {
                        // Only reachable by polling after a panic in `call`.
                        return Poll::Pending;
                    };
                    let future = service.call(request);
                    self.set(Self::Called { future });
                }
                OneshotProj::Called { future } => return future.poll(cx),
            }
        }
    }
}
