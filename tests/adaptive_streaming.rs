// Native only: tower and http are host dev-dependencies.
#![cfg(not(target_arch = "wasm32"))]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! An adaptive limit that holds its permit for a streamed body (issue 31):
//! `AdaptiveLimitLayer::new(Gradient2::default()).hold_permit_in_body()`
//! in front of a handler that answers its headers at once and streams its
//! body for 600 ms, with no capacity limit of its own. A call is timed to
//! its body's end, as long as it holds its permit, so the limit grows to
//! the demand. Timed to its headers (before), every call looked instant
//! while the limit stayed full. Manual clock, 1 ms steps; 24 closed-loop
//! callers (a refused one calls again 600 ms later); 30 simulated seconds.
//! Before: the limit stayed at its initial 6 (294 served, 900 refused);
//! now it reaches 48 (783 served).

use edgeshed::limit::adaptive::{AdaptiveLimitLayer, Bounds, Gradient2};
use edgeshed::time::{Clock, Instant, ManualClock};
use http::Response;
use http_body::{Body, Frame};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tower::{Service, ServiceExt};
use tower_layer::Layer;

const STREAM_MS: u64 = 600;
const CALLERS: usize = 24;

/// A body that ends `STREAM_MS` after its headers, on the manual clock.
struct Streamed {
    ends: Instant,
    clock: ManualClock,
}

impl Body for Streamed {
    type Data = bytes::Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        // Polled every simulated millisecond by the test: no waker needed.
        if self.clock.now() >= self.ends {
            Poll::Ready(None)
        } else {
            Poll::Pending
        }
    }
}

/// A response body being read, boxed (its type names the limit's layers).
type StreamingBody = Pin<Box<dyn Body<Data = bytes::Bytes, Error = Infallible>>>;

fn run(bounds: Bounds) -> (usize, u64, u64) {
    let clock = ManualClock::new();
    let handler_clock = clock.clone();
    let handler = tower::service_fn(move |_: ()| {
        let ends = handler_clock.now() + Duration::from_millis(STREAM_MS);
        let clock = handler_clock.clone();
        std::future::ready(Ok::<_, Infallible>(Response::new(Streamed { ends, clock })))
    });
    let mut service = AdaptiveLimitLayer::new(Gradient2::new(bounds))
        .shed_when_full()
        .clock(clock.clone())
        .hold_permit_in_body()
        .layer(handler);
    let waker = futures::task::noop_waker();
    let mut cx = Context::from_waker(&waker);
    let mut next_call = [0u64; CALLERS];
    let mut bodies: Vec<(usize, StreamingBody)> = Vec::new();
    let (mut served, mut refused) = (0u64, 0u64);
    for ms in 0..30_000u64 {
        bodies.retain_mut(|(caller, body)| match body.as_mut().poll_frame(&mut cx) {
            Poll::Ready(None) => {
                served += 1;
                next_call[*caller] = ms;
                false
            }
            _ => true,
        });
        for (caller, next) in next_call.iter_mut().enumerate() {
            if *next != ms {
                continue;
            }
            let ready = futures::FutureExt::now_or_never(service.ready());
            let mut call = ready.expect("always ready").unwrap().call(());
            match Pin::new(&mut call).poll(&mut cx) {
                Poll::Ready(Ok(response)) => {
                    bodies.push((caller, Box::pin(response.into_body())));
                    *next = u64::MAX;
                }
                Poll::Ready(Err(_)) => {
                    refused += 1;
                    *next = ms + STREAM_MS;
                }
                Poll::Pending => panic!("a shedding limit answers at once"),
            }
        }
        clock.advance(Duration::from_millis(1));
    }
    (service.admission().stats().limit, served, refused)
}

#[test]
fn a_limit_held_for_a_streamed_body_grows_to_the_demand() {
    for bounds in [Bounds::EDGE, Bounds::new(6, 6, 64).unwrap()] {
        let (limit, served, refused) = run(bounds);
        println!("{bounds:?}: limit {limit} after 30 s; served {served}, refused {refused}");
        assert!(limit >= CALLERS, "{bounds:?}: the limit stayed at {limit}");
        // All 24 callers streaming back to back: 24 / 0.6 s for 30 s = 1,200;
        // the limit's growth and its drains cost some (timed to the headers:
        // 294 served, the limit stuck at 6).
        assert!(
            served >= 720,
            "{bounds:?}: served {served}, refused {refused}"
        );
    }
}
