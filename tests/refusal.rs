// Native only: tower, tokio, axum and hyper are host dev-dependencies.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `RefusalResponseLayer` (issue 33): edgeshed's refusals answered as HTTP
//! responses with the contract's statuses and `Retry-After`, so an axum
//! app needs no `HandleErrorLayer`: in a real axum server over 127.0.0.1,
//! and per error with a service of its own.

#[allow(dead_code)] // each test crate uses a part of the shared support
mod axum_support;

use axum::routing::get;
use axum::Router;
use axum_support::request;
use edgeshed::error::{BoxError, Expired, Overloaded, RateLimited};
use edgeshed::limit::ConcurrencyLimitLayer;
use edgeshed::refusal::RefusalResponseLayer;
use http::{Request, Response, StatusCode};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::Notify;
use tower::{Service, ServiceBuilder, ServiceExt};
use tower_layer::Layer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_axum_app_answers_refusals_without_handle_error_layer() {
    let open = Arc::new(Notify::new());
    let entered = Arc::new(Notify::new());
    let (held, arrived) = (Arc::clone(&open), Arc::clone(&entered));
    // Router::layer needs an infallible service: this compiles only because
    // the layer answers every error itself.
    let app = Router::new()
        .route(
            "/work",
            get(move || {
                let (held, arrived) = (Arc::clone(&held), Arc::clone(&arrived));
                async move {
                    arrived.notify_one();
                    held.notified().await;
                    "done"
                }
            }),
        )
        .layer(
            ServiceBuilder::new()
                .layer(RefusalResponseLayer::new(Duration::from_secs(3)))
                .layer(ConcurrencyLimitLayer::new(1).unwrap().shed_when_full()),
        );
    let addr = axum_support::serve(app).await;
    let first = tokio::spawn(async move { request(addr, "/work").await.status().await });
    // The first request holds the one slot once its handler runs.
    entered.notified().await;
    let mut refused = request(addr, "/work").await;
    assert_eq!(refused.status().await, 503);
    assert_eq!(refused.header("retry-after").as_deref(), Some("3"));
    assert_eq!(
        refused.rest().await,
        "",
        "the error itself never reaches the client"
    );
    open.notify_one();
    assert_eq!(first.await.unwrap(), 200);
}

/// The response `RefusalResponseLayer` (retry after 2 s) gives for `error`.
async fn answer(error: BoxError) -> Response<String> {
    let error = Arc::new(std::sync::Mutex::new(Some(error)));
    let failing = tower::service_fn(move |_: Request<()>| {
        let error = error.lock().unwrap().take().unwrap();
        async move { Err::<Response<String>, BoxError>(error) }
    });
    RefusalResponseLayer::new(Duration::from_secs(2))
        .layer(failing)
        .oneshot(Request::new(()))
        .await
        .unwrap()
}

#[tokio::test]
async fn each_refusal_gets_the_contracts_status_and_retry_after() {
    let shed = answer(Box::new(Overloaded::new())).await;
    assert_eq!(shed.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(shed.headers()["retry-after"], "2");
    let timed_out = answer(Box::new(Overloaded::queue_timeout())).await;
    assert_eq!(timed_out.status(), StatusCode::SERVICE_UNAVAILABLE);
    // A rate limit's own time, rounded up to whole seconds.
    let limited = answer(Box::new(RateLimited::rate(Duration::from_millis(4_100)))).await;
    assert_eq!(limited.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(limited.headers()["retry-after"], "5");
    let soon = answer(Box::new(RateLimited::rate(Duration::from_millis(10)))).await;
    assert_eq!(soon.headers()["retry-after"], "1", "never Retry-After: 0");
    // The fair share has no time of its own: the layer's.
    let unfair = answer(Box::new(RateLimited::fair_share())).await;
    assert_eq!(unfair.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(unfair.headers()["retry-after"], "2");
    let expired = answer(Box::new(Expired::new())).await;
    assert_eq!(expired.status(), StatusCode::GATEWAY_TIMEOUT);
    assert!(expired.headers().get("retry-after").is_none());
    let bug = answer("the handler's own error".into()).await;
    assert_eq!(bug.status(), StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(bug.body(), "", "no error text in the body");
}

/// A service that refuses in `poll_ready` and counts its calls.
#[derive(Clone)]
struct NeverReady(Arc<AtomicUsize>);

impl Service<Request<()>> for NeverReady {
    type Response = Response<String>;
    type Error = BoxError;
    type Future = std::future::Ready<Result<Response<String>, BoxError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Err(Box::new(Overloaded::new())))
    }

    fn call(&mut self, _: Request<()>) -> Self::Future {
        self.0.fetch_add(1, Ordering::Relaxed);
        std::future::ready(Ok(Response::new("called".into())))
    }
}

#[tokio::test]
async fn a_readiness_error_is_answered_without_calling_the_inner_service() {
    let calls = Arc::new(AtomicUsize::new(0));
    let response = RefusalResponseLayer::new(Duration::from_secs(1))
        .layer(NeverReady(Arc::clone(&calls)))
        .oneshot(Request::new(()))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(calls.load(Ordering::Relaxed), 0);
}
