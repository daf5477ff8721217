//! A hyper server whose streamed response bodies hold their admission
//! permit until the last chunk is sent (or the client goes away), then a
//! client that reads one body chunk by chunk and watches the limit.
//!
//! `cargo run --example hyper_streaming` (needs the crate's `tokio` and
//! `http-body` features; the crate's own tests and examples have them on).
//! As the `main.rs` of a new app it needs:
//!
//! ```toml
//! [dependencies]
//! edgeshed = { git = "https://github.com/edgeshed/edgeshed", features = ["tokio", "http-body"] } # or path = "../edgeshed"
//! bytes = "1"
//! futures = "0.3"
//! http = "1"
//! http-body = "1"
//! http-body-util = "0.1"
//! hyper = { version = "1", features = ["http1", "server", "client"] }
//! hyper-util = { version = "0.1.10", features = ["tokio", "service"] }
//! tokio = { version = "1", features = ["macros", "rt", "net", "time"] }
//! tower = { version = "0.5", features = ["util"] }
//! ```

use bytes::Bytes;
use edgeshed::error::{BoxError, Overloaded};
use edgeshed::limit::ConcurrencyLimitLayer;
use edgeshed::time::TokioClock;
use http::{Request, Response, StatusCode};
use http_body::Frame;
use http_body_util::{BodyExt, Either, Empty, StreamBody};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::convert::Infallible;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tower::{ServiceBuilder, ServiceExt};

/// Three chunks, 20 ms apart: a slow, streamed answer.
fn slow_body() -> StreamBody<impl futures::Stream<Item = Result<Frame<Bytes>, Infallible>>> {
    StreamBody::new(futures::stream::unfold(0, |n| async move {
        if n == 3 {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        Some((Ok(Frame::data(Bytes::from(format!("chunk {n}\n")))), n + 1))
    }))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), BoxError> {
    let origin = tower::service_fn(|_: Request<hyper::body::Incoming>| async {
        Ok::<_, Infallible>(Response::new(slow_body()))
    });
    let limited = ServiceBuilder::new()
        .layer(
            ConcurrencyLimitLayer::new(2)?
                .queue(4, Duration::from_millis(50))?
                .clock(TokioClock::new())
                .hold_permit_in_body(), // Response<PermitBody<B>>
        )
        .service(origin);
    let admission = limited.admission().clone();
    // hyper wants an infallible service: overload becomes a 503.
    let service = tower::service_fn(move |request| {
        let limited = limited.clone();
        async move {
            let result: Result<_, BoxError> = limited.oneshot(request).await;
            Ok::<_, Infallible>(match result {
                Ok(response) => response.map(Either::Left),
                Err(error) => {
                    let mut refused = Response::new(Either::Right(Empty::<Bytes>::new()));
                    *refused.status_mut() = match error.is::<Overloaded>() {
                        true => StatusCode::SERVICE_UNAVAILABLE,
                        false => StatusCode::INTERNAL_SERVER_ERROR,
                    };
                    refused
                }
            })
        }
    });

    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let service = TowerToHyperService::new(service.clone());
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .serve_connection(TokioIo::new(stream), service),
            );
        }
    });

    // The client: one request, read chunk by chunk.
    let stream = TcpStream::connect(addr).await?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    let request = Request::get("/").body(Empty::<Bytes>::new())?;
    let mut body = sender.send_request(request).await?.into_body();
    while let Some(frame) = body.frame().await {
        if let Ok(chunk) = frame?.into_data() {
            let text = String::from_utf8_lossy(&chunk);
            println!(
                "{} (in flight: {})",
                text.trim_end(),
                admission.stats().in_flight
            );
        }
    }
    println!("body done (in flight: {})", admission.stats().in_flight);
    Ok(())
}
