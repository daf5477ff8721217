//! An axum app with one concurrency limit for the whole app, built the way
//! axum documents middleware (`Router::layer`, `axum::serve`), then eight
//! clients at once, each on its own connection: 2 are served, 2 wait in the
//! queue until it times them out, 4 are shed at once.
//!
//! `cargo run --example axum`. As the `main.rs` of a new app it needs:
//!
//! ```toml
//! [dependencies]
//! edgeshed = { git = "https://github.com/edgeshed/edgeshed", features = ["tokio", "http-body"] } # or path = "../edgeshed"
//! axum = { version = "0.8", default-features = false, features = ["http1", "tokio"] }
//! tokio = { version = "1", features = ["macros", "rt-multi-thread", "net", "time", "io-util"] }
//! tower = "0.5"
//! ```
//!
//! The limit lives in the layer: axum builds the router's services again for
//! every connection, and every one of them shares the layer's limit
//! (`.per_service()` would give each connection a limit of its own).

use axum::error_handling::HandleErrorLayer;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use edgeshed::error::{BoxError, Expired, Overloaded};
use edgeshed::limit::ConcurrencyLimitLayer;
use edgeshed::time::TokioClock;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tower::ServiceBuilder;

/// What the app answers when the limit refuses a request.
async fn refused(error: BoxError) -> Response {
    if let Some(overloaded) = error.downcast_ref::<Overloaded>() {
        let retry_after = [(header::RETRY_AFTER, "1")];
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            retry_after,
            overloaded.to_string(),
        )
            .into_response();
    }
    match error.is::<Expired>() {
        true => StatusCode::GATEWAY_TIMEOUT.into_response(),
        false => (StatusCode::INTERNAL_SERVER_ERROR, error.to_string()).into_response(),
    }
}

/// `GET path` on a connection of its own: the status line and the body.
async fn get_once(addr: SocketAddr, path: &str) -> Result<String, BoxError> {
    let mut stream = TcpStream::connect(addr).await?;
    let request = format!("GET {path} HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await?;
    let status = answer.lines().next().unwrap_or_default().to_owned();
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
    Ok(format!("{status}: {body}"))
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    // At most 2 requests at once, 2 more waiting for at most 50 ms each;
    // a request holds its slot until its body is sent (feature `http-body`).
    let limit = ConcurrencyLimitLayer::new(2)?
        .queue(2, Duration::from_millis(50))?
        .clock(TokioClock::new())
        .hold_permit_in_body();
    let admission = limit.admission().clone();
    let app = Router::new()
        .route(
            "/work",
            get(|| async {
                tokio::time::sleep(Duration::from_millis(200)).await; // a slow origin
                "done"
            }),
        )
        .layer(
            ServiceBuilder::new()
                .layer(HandleErrorLayer::new(refused))
                .layer(limit),
        )
        // Added after `layer`, so not limited: the stats stay reachable under load.
        .route(
            "/stats",
            get(move || async move { format!("{:?}", admission.stats()) }),
        );

    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });

    let clients: Vec<_> = (0..8)
        .map(|_| tokio::spawn(get_once(addr, "/work")))
        .collect();
    for client in clients {
        println!("{}", client.await??);
    }
    println!("{}", get_once(addr, "/stats").await?);
    Ok(())
}
