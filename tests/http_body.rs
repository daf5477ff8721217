// Native only: tower, tokio and hyper are host dev-dependencies.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `hold_permit_in_body` with a real hyper server and client on tokio over
//! 127.0.0.1: a streamed body holds its permit until its last chunk, and a
//! client that disconnects mid-body frees it. Plus `PermitBody` on its own:
//! released at the end or on an error even while the body is still alive.

use bytes::Bytes;
use edgeshed::admission::Admission;
use edgeshed::error::Overloaded;
use edgeshed::http_body::PermitBody;
use edgeshed::limit::ConcurrencyLimitLayer;
use edgeshed::BoxError;
use http::{Request, Response, StatusCode};
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Either, Empty};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tower::ServiceExt;
use tower_layer::Layer;

/// The longest any single step may take before the test fails (a bound,
/// never waited out when things work).
const BOUND: Duration = Duration::from_secs(10);

/// A body whose chunks the test sends one by one; it ends when the sender is dropped.
struct ChannelBody(mpsc::Receiver<Bytes>);

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0
            .poll_recv(cx)
            .map(|chunk| chunk.map(|c| Ok(Frame::data(c))))
    }
}

type Reply = Response<Either<PermitBody<ChannelBody>, Empty<Bytes>>>;

/// A hyper server whose every request gets a streamed body; the sender of
/// each body is handed to the test. At most one response body at once; the
/// rest are shed with 503.
async fn serve() -> (
    SocketAddr,
    Admission,
    mpsc::UnboundedReceiver<mpsc::Sender<Bytes>>,
) {
    let (bodies_tx, bodies) = mpsc::unbounded_channel();
    let origin = tower::service_fn(move |_: Request<hyper::body::Incoming>| {
        let (chunks, rx) = mpsc::channel(4);
        let _ = bodies_tx.send(chunks);
        std::future::ready(Ok::<_, Infallible>(Response::new(ChannelBody(rx))))
    });
    let limited = ConcurrencyLimitLayer::new(1)
        .unwrap()
        .shed_when_full()
        .hold_permit_in_body()
        .layer(origin);
    let admission = limited.admission().clone();
    let service = tower::service_fn(move |request| {
        let limited = limited.clone();
        async move {
            let result: Result<_, BoxError> = limited.oneshot(request).await;
            let reply: Reply = match result {
                Ok(response) => response.map(Either::Left),
                Err(error) => {
                    let mut refused = Response::new(Either::Right(Empty::new()));
                    *refused.status_mut() = if error.is::<Overloaded>() {
                        StatusCode::SERVICE_UNAVAILABLE
                    } else {
                        StatusCode::INTERNAL_SERVER_ERROR
                    };
                    refused
                }
            };
            Ok::<_, Infallible>(reply)
        }
    });
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let service = TowerToHyperService::new(service.clone());
            tokio::spawn(async move {
                // An error here is a client that went away: expected.
                let _ = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (addr, admission, bodies)
}

/// Sends `GET /` on a new connection; returns the response and the task
/// that drives the connection (abort it to disconnect).
async fn get(addr: SocketAddr) -> (Response<hyper::body::Incoming>, tokio::task::JoinHandle<()>) {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    let driver = tokio::spawn(async move {
        let _ = connection.await;
    });
    let request = Request::get("/").body(Empty::<Bytes>::new()).unwrap();
    let response = within(sender.send_request(request)).await.unwrap();
    (response, driver)
}

async fn within<F: std::future::Future>(future: F) -> F::Output {
    tokio::time::timeout(BOUND, future)
        .await
        .expect("step took longer than the bound")
}

async fn next_chunk(body: &mut hyper::body::Incoming) -> Option<Bytes> {
    let frame = within(body.frame()).await?.unwrap();
    Some(frame.into_data().unwrap())
}

#[tokio::test(flavor = "current_thread")]
async fn a_streamed_body_holds_its_permit_until_the_last_chunk() {
    let (addr, admission, mut bodies) = serve().await;
    let (response, _driver) = get(addr).await;
    assert_eq!(response.status(), StatusCode::OK);
    let chunks = within(bodies.recv()).await.unwrap();
    let mut body = response.into_body();

    chunks.send(Bytes::from("one")).await.unwrap();
    assert_eq!(next_chunk(&mut body).await.unwrap(), "one");
    assert_eq!(
        admission.stats().in_flight,
        1,
        "headers sent, body still streaming"
    );
    // Meanwhile a second request is shed: the permit is in the body.
    let (second, _) = get(addr).await;
    assert_eq!(second.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(admission.stats().shed, 1);

    chunks.send(Bytes::from("two")).await.unwrap();
    assert_eq!(next_chunk(&mut body).await.unwrap(), "two");
    assert_eq!(admission.stats().in_flight, 1);
    drop(chunks); // the last chunk was "two": the body ends
    assert_eq!(next_chunk(&mut body).await, None);
    assert_eq!(
        admission.stats().in_flight,
        0,
        "the end of the body freed the permit"
    );

    // The next request is admitted.
    let (third, _) = get(addr).await;
    assert_eq!(third.status(), StatusCode::OK);
    drop(within(bodies.recv()).await.unwrap());
    assert!(within(third.into_body().collect()).await.is_ok());
}

#[tokio::test(flavor = "current_thread")]
async fn a_client_that_disconnects_mid_body_frees_the_permit() {
    let (addr, admission, mut bodies) = serve().await;
    let (response, driver) = get(addr).await;
    let chunks = within(bodies.recv()).await.unwrap();
    let mut body = response.into_body();
    chunks.send(Bytes::from("one")).await.unwrap();
    assert_eq!(next_chunk(&mut body).await.unwrap(), "one");
    assert_eq!(admission.stats().in_flight, 1);

    // The client goes away mid-body: its connection is closed.
    drop(body);
    driver.abort();
    assert!(within(driver).await.unwrap_err().is_cancelled());
    // hyper notices (on its next read or write) and drops the body: the
    // channel closes. The permit is dropped before the channel's receiver.
    let _ = chunks.send(Bytes::from("lost")).await;
    within(chunks.closed()).await;
    assert_eq!(
        admission.stats().in_flight,
        0,
        "the dropped body freed the permit"
    );

    let (next, _) = get(addr).await;
    assert_eq!(next.status(), StatusCode::OK);
}

/// A body that yields one chunk, then (optionally) an error.
struct Script(Vec<Result<Bytes, &'static str>>);

impl Body for Script {
    type Data = Bytes;
    type Error = &'static str;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, &'static str>>> {
        let next = (!self.0.is_empty()).then(|| self.0.remove(0));
        Poll::Ready(next.map(|item| item.map(Frame::data)))
    }
}

#[tokio::test(flavor = "current_thread")]
async fn the_permit_is_released_at_the_end_and_on_an_error_while_the_body_lives() {
    let admission = Admission::wait(2).unwrap();
    let mut ends = PermitBody::new(Script(vec![Ok(Bytes::from("a"))]), admission.try_admit());
    let mut fails = PermitBody::new(Script(vec![Err("broken")]), admission.try_admit());
    assert_eq!(admission.stats().in_flight, 2);

    assert!(ends.frame().await.unwrap().is_ok());
    assert!(ends.holds_permit());
    assert!(ends.frame().await.is_none());
    assert!(!ends.holds_permit());
    assert_eq!(
        admission.stats().in_flight,
        1,
        "released at the end, body still alive"
    );

    assert_eq!(fails.frame().await.unwrap().unwrap_err(), "broken");
    assert_eq!(
        admission.stats().in_flight,
        0,
        "released on the error, body still alive"
    );
    drop((ends, fails));
}

#[tokio::test(flavor = "current_thread")]
async fn a_last_frame_that_reports_the_end_of_stream_releases_at_once() {
    let admission = Admission::wait(1).unwrap();
    let full = http_body_util::Full::new(Bytes::from("all"));
    let mut body = PermitBody::new(full, admission.try_admit());
    assert!(body.frame().await.unwrap().is_ok());
    // `Full` says it is done after its only frame; hyper would stop polling here.
    assert!(body.is_end_stream());
    assert_eq!(admission.stats().in_flight, 0);
}
