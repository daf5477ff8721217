//! A real axum app on 127.0.0.1 whose handlers stay in flight until the test
//! releases them, and a hyper client that opens one connection per request.

use axum::body::Body;
use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use edgeshed::error::{BoxError, Overloaded};
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, Semaphore};

/// What `HandleErrorLayer` answers for an error of the limit: 503 when shed.
pub async fn overload_status(error: BoxError) -> StatusCode {
    match error.is::<Overloaded>() {
        true => StatusCode::SERVICE_UNAVAILABLE,
        false => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// Serves `app` with `axum::serve` on an ephemeral port of 127.0.0.1.
pub async fn serve(app: Router) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local address");
    tokio::spawn(async move { axum::serve(listener, app).await.expect("axum::serve") });
    addr
}

struct Shared {
    /// Opened by `release`, one permit per handler or body held.
    gate: Semaphore,
    /// Handlers and bodies waiting at the gate.
    held: AtomicUsize,
    entered: mpsc::UnboundedSender<()>,
}

impl Shared {
    async fn pass_gate(&self) {
        self.gate.acquire().await.expect("gate open").forget();
    }
}

/// The origin behind the limit: `/a` and `/b` answer once released; `/stream`
/// sends its headers and a first chunk at once and the second once released.
pub struct Origin {
    shared: Arc<Shared>,
    entered: mpsc::UnboundedReceiver<()>,
}

impl Origin {
    pub fn new() -> Self {
        let (sender, entered) = mpsc::unbounded_channel();
        let shared = Shared {
            gate: Semaphore::new(0),
            held: AtomicUsize::new(0),
            entered: sender,
        };
        Self {
            shared: Arc::new(shared),
            entered,
        }
    }

    /// The routes, before any layer.
    pub fn routes(&self) -> Router {
        let held = |shared: Arc<Shared>| async move {
            shared.held.fetch_add(1, Ordering::SeqCst);
            shared.entered.send(()).expect("test listens");
            shared.pass_gate().await;
            "ok"
        };
        let (a, b, stream) = (
            self.shared.clone(),
            self.shared.clone(),
            self.shared.clone(),
        );
        Router::new()
            .route("/a", get(move || held(a.clone())))
            .route("/b", get(move || held(b.clone())))
            .route("/stream", get(move || streamed(stream.clone())))
    }

    /// Lets every handler and body held so far go on.
    pub fn release(&self) {
        self.shared
            .gate
            .add_permits(self.shared.held.swap(0, Ordering::SeqCst));
    }

    /// Starts one client (its own connection) per path.
    pub fn clients(&self, addr: SocketAddr, paths: &[&'static str]) -> Clients {
        let (sender, done) = mpsc::unbounded_channel();
        for &path in paths {
            let sender = sender.clone();
            tokio::spawn(async move { sender.send(status_of(addr, path).await) });
        }
        Clients {
            done,
            left: paths.len(),
        }
    }

    /// Waits until each of `n` calls has either entered a handler or been
    /// answered: (handlers entered, statuses answered meanwhile).
    pub async fn settle(&mut self, clients: &mut Clients, n: usize) -> (usize, Vec<u16>) {
        let (mut entered, mut answered) = (0, Vec::new());
        while entered + answered.len() < n {
            tokio::select! {
                Some(()) = self.entered.recv() => entered += 1,
                Some(status) = clients.done.recv() => answered.push(status),
            }
        }
        clients.left -= answered.len();
        (entered, answered)
    }
}

async fn streamed(shared: Arc<Shared>) -> axum::response::Response {
    shared.held.fetch_add(1, Ordering::SeqCst);
    let chunks = futures::stream::unfold(0, move |n| {
        let shared = shared.clone();
        async move {
            match n {
                0 => {}
                1 => shared.pass_gate().await,
                _ => return None,
            }
            Some((
                Ok::<_, Infallible>(Bytes::from(format!("chunk {n}\n"))),
                n + 1,
            ))
        }
    });
    axum::response::Response::new(Body::from_stream(chunks))
}

/// Clients started by [`Origin::clients`].
pub struct Clients {
    done: mpsc::UnboundedReceiver<u16>,
    left: usize,
}

impl Clients {
    /// The statuses not yet taken by `settle`, sorted.
    pub async fn rest(&mut self) -> Vec<u16> {
        let mut statuses = Vec::new();
        for _ in 0..self.left {
            statuses.push(self.done.recv().await.expect("client answered"));
        }
        self.left = 0;
        statuses.sort_unstable();
        statuses
    }
}

/// A response whose body is read on demand.
pub struct Reply {
    response: Option<hyper::Response<hyper::body::Incoming>>,
}

impl Reply {
    pub async fn status(&mut self) -> u16 {
        self.response.as_ref().expect("response").status().as_u16()
    }

    /// A header's value, if the response has it.
    pub fn header(&self, name: &str) -> Option<String> {
        let headers = self.response.as_ref().expect("response").headers();
        headers
            .get(name)
            .map(|v| v.to_str().expect("ascii").to_owned())
    }

    /// The whole body, as text.
    pub async fn rest(&mut self) -> String {
        let body = self.response.take().expect("response").into_body();
        let bytes = body.collect().await.expect("body").to_bytes();
        String::from_utf8(bytes.to_vec()).expect("utf-8 body")
    }
}

/// `GET path` on a connection of its own; returns once the headers are in.
pub async fn request(addr: SocketAddr, path: &str) -> Reply {
    let stream = TcpStream::connect(addr).await.expect("connect");
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("handshake");
    tokio::spawn(connection);
    let request = hyper::Request::get(path)
        .header("host", "edgeshed.test")
        .body(Empty::<Bytes>::new());
    let response = sender
        .send_request(request.expect("request"))
        .await
        .expect("response");
    Reply {
        response: Some(response),
    }
}

/// The status of `GET path`, after reading its body.
pub async fn status_of(addr: SocketAddr, path: &str) -> u16 {
    let mut reply = request(addr, path).await;
    let status = reply.status().await;
    reply.rest().await;
    status
}
