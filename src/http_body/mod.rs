//! Hold the permit until an HTTP response's body is done (feature `http-body`).
//!
//! A [`ConcurrencyLimit`](crate::limit::ConcurrencyLimit) normally gives its
//! permit back when the response future completes — for hyper and axum that
//! is when the *headers* are ready, while a streamed body may keep the
//! backend busy for much longer. With
//! [`hold_permit_in_body`](crate::limit::ConcurrencyLimitLayer::hold_permit_in_body)
//! the service answers `http::Response<PermitBody<B>>`: the permit moves into
//! the body and is returned when the body
//!
//! * ends (its last frame was read, or it reports
//!   [`is_end_stream`](http_body::Body::is_end_stream)),
//! * fails (a frame was an error), or
//! * is dropped — hyper drops it when the client disconnects mid-body.
//!
//! ```
//! use bytes::Bytes;
//! use edgeshed::http_body::PermitBody;
//! use edgeshed::limit::ConcurrencyLimitLayer;
//! use http_body_util::{BodyExt, Full};
//! use std::future::poll_fn;
//! use tower_layer::Layer;
//! use tower_service::Service;
//!
//! # futures::executor::block_on(async {
//! let origin = tower::service_fn(|_: http::Request<()>| async {
//!     Ok::<_, std::convert::Infallible>(http::Response::new(Full::new(Bytes::from("hello"))))
//! });
//! let mut svc = ConcurrencyLimitLayer::new(1).unwrap().shed_when_full().hold_permit_in_body().layer(origin);
//!
//! poll_fn(|cx| svc.poll_ready(cx)).await.unwrap();
//! let response: http::Response<PermitBody<Full<Bytes>>> = svc.call(http::Request::new(())).await.unwrap();
//! assert_eq!(svc.admission().stats().in_flight, 1); // the body still holds the permit
//! let body = response.into_body().collect().await.unwrap().to_bytes();
//! assert_eq!(body, "hello");
//! assert_eq!(svc.admission().stats().in_flight, 0); // released at the end of the body
//! # });
//! ```

mod body;

pub(crate) use body::BodyEnd;
pub use body::PermitBody;

use crate::release::Release;
use crate::semaphore::Permit;

/// The [`Release`] of [`hold_permit_in_body`](crate::limit::ConcurrencyLimitLayer::hold_permit_in_body):
/// an `http::Response<B>` becomes an `http::Response<PermitBody<B>>`.
#[derive(Clone, Copy, Debug, Default)]
pub struct HoldInBody;

impl<B> Release<http::Response<B>> for HoldInBody {
    type Output = http::Response<PermitBody<B>>;

    fn finish(response: http::Response<B>, permit: Option<Permit>) -> Self::Output {
        response.map(|body| PermitBody::new(body, permit))
    }
}
