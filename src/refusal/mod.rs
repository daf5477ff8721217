//! Answers refusals as HTTP responses: a layer for axum and hyper apps that
//! turns edgeshed's errors into the statuses the contract gives them, with
//! `Retry-After`, so an app needs no `HandleErrorLayer` of its own.
//!
//! | error of the inner service | response |
//! |---|---|
//! | [`Overloaded`] (shed, queue timeout, displaced) | 503, `Retry-After: retry_after` |
//! | [`RateLimited`] | 429, `Retry-After`: its own time, rounded up to whole seconds (at least 1), else `retry_after` (the fair share) |
//! | [`Expired`] (a deadline) | 504 |
//! | anything else | 500 |
//!
//! The body is the response body type's `Default` (empty for axum's and
//! hyper's bodies); the error itself never reaches the client. So the
//! service is infallible, as axum wants (feature `http`).
//!
//! ```
//! use edgeshed::limit::ConcurrencyLimitLayer;
//! use edgeshed::refusal::RefusalResponseLayer;
//! use http::{Request, Response, StatusCode};
//! use std::convert::Infallible;
//! use std::time::Duration;
//! use tower::{service_fn, Service, ServiceBuilder, ServiceExt};
//!
//! # futures::executor::block_on(async {
//! let handler = service_fn(|_: Request<()>| std::future::pending::<Result<Response<String>, Infallible>>());
//! let mut app = ServiceBuilder::new()
//!     .layer(RefusalResponseLayer::new(Duration::from_secs(2)))
//!     .layer(ConcurrencyLimitLayer::new(1).unwrap().shed_when_full())
//!     .service(handler);
//! // The first request holds the one slot...
//! let mut first = app.ready().await.unwrap().call(Request::new(()));
//! assert!(futures::poll!(&mut first).is_pending());
//! // ...so the second is answered 503 with Retry-After, not an error.
//! let refused = app.ready().await.unwrap().call(Request::new(())).await.unwrap();
//! assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
//! assert_eq!(refused.headers()["retry-after"], "2");
//! # });
//! ```

mod future;
mod layer;
mod service;

pub use future::RefusalResponseFuture;
pub use layer::RefusalResponseLayer;
pub use service::RefusalResponse;

use crate::error::{BoxError, Expired, Overloaded, RateLimited};
use core::time::Duration;
use http::{header::RETRY_AFTER, HeaderValue, Response, StatusCode};

/// The response for `error`, with `retry_after` where the error has no time
/// of its own.
fn respond<B: Default>(error: &BoxError, retry_after: Duration) -> Response<B> {
    let (status, after) = if error.is::<Overloaded>() {
        (StatusCode::SERVICE_UNAVAILABLE, Some(retry_after))
    } else if let Some(limited) = error.downcast_ref::<RateLimited>() {
        (
            StatusCode::TOO_MANY_REQUESTS,
            Some(limited.retry_after().unwrap_or(retry_after)),
        )
    } else if error.is::<Expired>() {
        (StatusCode::GATEWAY_TIMEOUT, None)
    } else {
        (StatusCode::INTERNAL_SERVER_ERROR, None)
    };
    let mut response = Response::new(B::default());
    *response.status_mut() = status;
    if let Some(after) = after {
        response
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from(whole_seconds(after)));
    }
    response
}

/// `after` in whole seconds, rounded up, at least 1 (`Retry-After: 0`
/// would invite a retry storm).
fn whole_seconds(after: Duration) -> u64 {
    let seconds = after.as_secs() + u64::from(after.subsec_nanos() > 0);
    seconds.max(1)
}
