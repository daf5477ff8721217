#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
#![cfg(not(target_arch = "wasm32"))]
//! axum, served the way axum documents it (`Router::layer(...)` then
//! `axum::serve(listener, app)`), over real TCP connections on 127.0.0.1.
//!
//! axum builds a router's services again for every connection, so each
//! connection calls `Layer::layer` anew: a limit must live in the layer, not
//! in the service it builds, or every connection gets a fresh one.

#[allow(dead_code)] // each test crate uses a part of the shared support
mod axum_support;

use axum_support::{overload_status, request, serve, Origin};
use edgeshed::limit::adaptive::{AdaptiveLimitLayer, Aimd, Bounds};
use edgeshed::limit::ConcurrencyLimitLayer;
use edgeshed::time::TokioClock;
use tower::ServiceBuilder;

/// The origin's routes behind `limit`, the way axum documents a fallible
/// middleware: `HandleErrorLayer` turns the limit's errors into statuses.
macro_rules! limited {
    ($origin:expr, $limit:expr) => {
        $origin.routes().layer(
            ServiceBuilder::new()
                .layer(axum::error_handling::HandleErrorLayer::new(overload_status))
                .layer($limit),
        )
    };
}

/// Six clients on six connections, over two routes: the first two are let in
/// (and held there), the other four are answered 503 while they wait.
async fn two_in_four_shed(mut origin: Origin, app: axum::Router) {
    let addr = serve(app).await;
    let mut clients = origin.clients(addr, &["/a", "/b", "/a", "/b", "/a", "/b"]);
    let (entered, refused) = origin.settle(&mut clients, 6).await;
    assert_eq!(
        entered, 2,
        "calls let in by a limit of 2 (refused: {refused:?})"
    );
    assert_eq!(refused, vec![503; 4], "the rest are shed at once");
    origin.release();
    assert_eq!(clients.rest().await, vec![200, 200]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_router_layer_limits_the_whole_app_across_connections() {
    let limit = ConcurrencyLimitLayer::new(2).unwrap().shed_when_full();
    let origin = Origin::new();
    let app = limited!(origin, limit.clone());
    two_in_four_shed(origin, app).await;
    let stats = limit.admission().stats();
    assert_eq!((stats.admitted, stats.shed, stats.in_flight), (2, 4, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_adaptive_router_layer_limits_the_whole_app_across_connections() {
    let bounds = Bounds::new(2, 1, 2).unwrap();
    let limit = AdaptiveLimitLayer::new(Aimd::new(bounds, 0.9))
        .shed_when_full()
        .clock(TokioClock::new());
    let origin = Origin::new();
    let app = limited!(origin, limit.clone());
    two_in_four_shed(origin, app).await;
    assert_eq!(limit.admission().stats().shed, 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_per_service_layer_limits_each_connection_on_its_own() {
    // The explicit opt-out: tower's ConcurrencyLimitLayer semantics.
    let mut origin = Origin::new();
    let per_connection = ConcurrencyLimitLayer::new(1)
        .unwrap()
        .shed_when_full()
        .per_service();
    let app = limited!(origin, per_connection);
    let addr = serve(app).await;
    let mut clients = origin.clients(addr, &["/a", "/a", "/a"]);
    let (entered, refused) = origin.settle(&mut clients, 3).await;
    assert_eq!((entered, refused), (3, vec![]), "one connection, one limit");
    origin.release();
    assert_eq!(clients.rest().await, vec![200, 200, 200]);
}

/// A streamed body holds the permit until it has been sent: while one body
/// streams, a second request is shed; once it ended, the next is let in.
async fn body_holds_the_permit(mut origin: Origin, app: axum::Router) {
    let addr = serve(app).await;
    let mut streaming = request(addr, "/stream").await;
    assert_eq!(
        streaming.status().await,
        200,
        "headers sent, body still streaming"
    );
    let mut second = origin.clients(addr, &["/a"]);
    let (entered, refused) = origin.settle(&mut second, 1).await;
    assert_eq!(
        (entered, refused),
        (0, vec![503]),
        "the streaming body holds the only permit"
    );
    origin.release();
    assert_eq!(streaming.rest().await, "chunk 0\nchunk 1\n");
    let mut after = origin.clients(addr, &["/a"]);
    let (entered, refused) = origin.settle(&mut after, 1).await;
    assert_eq!(
        (entered, refused),
        (1, vec![]),
        "the permit came back with the body's end"
    );
    origin.release();
    assert_eq!(after.rest().await, vec![200]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_body_holds_its_permit() {
    let origin = Origin::new();
    let limit = ConcurrencyLimitLayer::new(1)
        .unwrap()
        .shed_when_full()
        .hold_permit_in_body();
    let app = limited!(origin, limit);
    body_holds_the_permit(origin, app).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_adaptive_streamed_body_holds_its_permit() {
    let origin = Origin::new();
    let bounds = Bounds::new(1, 1, 1).unwrap();
    let limit = AdaptiveLimitLayer::new(Aimd::new(bounds, 0.9))
        .shed_when_full()
        .clock(TokioClock::new())
        .hold_permit_in_body();
    let app = limited!(origin, limit);
    body_holds_the_permit(origin, app).await;
}
