#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! The four tower scenarios of seed 001 ("service overloaded"), rebuilt with
//! edgeshed's types on a manual clock, asserting the transcript the seed prints.

mod support;

use edgeshed::error::{BoxError, NotReady, OverloadCause, Overloaded};
use edgeshed::limit::{ConcurrencyLimit, ConcurrencyLimitLayer};
use edgeshed::load_shed::{LoadShed, LoadShedLayer};
use edgeshed::time::{Clock, Instant, ManualClock, ManualSleep};
use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use support::{downcast, CountingWaker};
use tower::{ServiceBuilder, ServiceExt};
use tower_service::Service;

const MS: Duration = Duration::from_millis(1);

type EchoFn = fn(u32) -> std::future::Ready<Result<u32, BoxError>>;

fn echo() -> tower::util::ServiceFn<EchoFn> {
    tower::service_fn(|x: u32| std::future::ready(Ok(x)))
}

/// Runs `future` to completion like tokio's paused clock does: whenever it
/// is stuck, time jumps forward (1 ms at a time) until a timer wakes it.
fn run<F: Future>(clock: &ManualClock, future: F) -> F::Output {
    let mut future = pin!(future);
    let waker = CountingWaker::new();
    for _ in 0..100_000 {
        let woken = waker.count();
        if let Poll::Ready(output) = waker.poll_pin(future.as_mut()) {
            return output;
        }
        assert!(
            clock.armed_timers() > 0 || waker.count() > woken,
            "stuck: nothing would ever wake the future"
        );
        while waker.count() == woken {
            clock.advance(MS);
        }
    }
    panic!("the future did not finish");
}

/// One line of the seed's output.
fn show(clock: &ManualClock, what: &str, outcome: Result<u32, BoxError>) -> String {
    let ms = clock.now().since_origin().as_millis();
    match outcome {
        Ok(value) => format!("  {what}: ok {value} at {ms}ms"),
        Err(error) => format!(
            "  {what}: err \"{error}\" overloaded={} at {ms}ms",
            error.is::<Overloaded>()
        ),
    }
}

/// What an HTTP layer would do with the error.
fn status(error: &BoxError) -> u16 {
    if error.is::<Overloaded>() {
        503
    } else {
        500
    }
}

/// tower's `RateLimit` (`num` requests per `per`), test-only and `Clone`:
/// clones share the window, so edgeshed's `LoadShed` (which needs `S: Clone`)
/// can sit on top of it. Time comes from a `ManualClock`.
struct RateLimit<S> {
    inner: S,
    clock: ManualClock,
    num: u32,
    per: Duration,
    window: Arc<Mutex<Window>>,
    sleep: Option<Pin<Box<ManualSleep>>>,
}

#[derive(Debug)]
struct Window {
    until: Instant,
    remaining: u32,
}

impl<S> RateLimit<S> {
    fn new(inner: S, num: u32, per: Duration, clock: ManualClock) -> Self {
        let window = Window {
            until: clock.now() + per,
            remaining: num,
        };
        Self {
            inner,
            clock,
            num,
            per,
            window: Arc::new(Mutex::new(window)),
            sleep: None,
        }
    }
}

impl<S: Clone> Clone for RateLimit<S> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            clock: self.clock.clone(),
            num: self.num,
            per: self.per,
            window: Arc::clone(&self.window),
            sleep: None,
        }
    }
}

impl<S: Service<R>, R> Service<R> for RateLimit<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        loop {
            let until = {
                let mut window = self.window.lock().unwrap();
                let now = self.clock.now();
                if now >= window.until {
                    window.until = now + self.per;
                    window.remaining = self.num;
                }
                if window.remaining > 0 {
                    self.sleep = None;
                    break;
                }
                window.until
            };
            let clock = &self.clock;
            let sleep = self
                .sleep
                .get_or_insert_with(|| Box::pin(clock.sleep_until(until)));
            if sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            self.sleep = None;
        }
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: R) -> S::Future {
        let mut window = self.window.lock().unwrap();
        window.remaining = window.remaining.saturating_sub(1);
        drop(window);
        self.inner.call(request)
    }
}

#[test]
fn scenario_1_call_without_ready() {
    let clock = ManualClock::new();
    let lines = run(&clock, async {
        let mut lines = Vec::new();

        // A bare ConcurrencyLimit: tower panics here, edgeshed answers NotReady.
        let mut bare = ConcurrencyLimit::new(echo(), 10).unwrap();
        let error = bare.call(1).await.unwrap_err();
        downcast::<NotReady>(&error);
        lines.push(show(&clock, "bare call(1)", Err(error)));
        let ok = bare.ready().await.unwrap().call(2).await;
        lines.push(show(&clock, "bare ready + call(2)", ok));

        // The seed's stack: LoadShed > ConcurrencyLimit(10).
        let mut svc = ServiceBuilder::new()
            .layer(LoadShedLayer::new())
            .layer(ConcurrencyLimitLayer::new(10).unwrap())
            .service(echo());
        let error = svc.call(1).await.unwrap_err();
        assert_eq!(downcast::<Overloaded>(&error).cause(), OverloadCause::Shed);
        lines.push(show(&clock, "call(1)", Err(error)));
        let ok = svc.ready().await.unwrap().call(2).await;
        lines.push(show(&clock, "ready + call(2)", ok));
        lines
    });
    assert_eq!(
        lines,
        [
            "  bare call(1): err \"call before poll_ready reported ready\" overloaded=false at 0ms",
            "  bare ready + call(2): ok 2 at 0ms",
            // The seed's two lines, verbatim:
            "  call(1): err \"service overloaded\" overloaded=true at 0ms",
            "  ready + call(2): ok 2 at 0ms",
        ]
    );
}

#[test]
fn scenario_1_a_fresh_clone_is_not_ready_either() {
    let mut svc = LoadShed::new(ConcurrencyLimit::new(echo(), 10).unwrap());
    let clock = ManualClock::new();
    run(&clock, async {
        svc.ready().await.unwrap();
        let mut clone = svc.clone();
        let error = clone.call(1).await.unwrap_err();
        assert!(error.is::<Overloaded>());
        assert_eq!(svc.call(2).await.unwrap(), 2);
    });
}

#[test]
fn scenario_2_load_shed_over_a_rate_limit_sheds_sequential_requests() {
    let clock = ManualClock::new();
    let mut svc = LoadShed::new(RateLimit::new(echo(), 1, 100 * MS, clock.clone()));
    let lines = run(&clock, async {
        let mut lines = Vec::new();
        for i in 1..=3 {
            let outcome = svc.ready().await.unwrap().call(i).await;
            lines.push(show(&clock, &format!("req {i}"), outcome));
        }
        lines
    });
    assert_eq!(
        lines,
        [
            "  req 1: ok 1 at 0ms",
            "  req 2: err \"service overloaded\" overloaded=true at 0ms",
            "  req 3: err \"service overloaded\" overloaded=true at 0ms",
        ]
    );
    // No concurrency at all: the rejections came from the rate limiter's
    // Pending, and they stop with the next window.
    assert_eq!(clock.now(), Instant::from_origin(Duration::ZERO));
    clock.advance(100 * MS);
    let outcome = run(&clock, async { svc.ready().await.unwrap().call(4).await });
    assert_eq!(outcome.unwrap(), 4);
}

#[test]
fn scenario_3_rate_limit_outside_load_shed_queues_instead_of_shedding() {
    let clock = ManualClock::new();
    let limit = ConcurrencyLimit::new(echo(), 10).unwrap();
    let admission = limit.admission().clone();
    let mut svc = RateLimit::new(LoadShed::new(limit), 1, 100 * MS, clock.clone());
    let lines = run(&clock, async {
        let mut lines = Vec::new();
        for i in 1..=3 {
            let outcome = svc.ready().await.unwrap().call(i).await;
            lines.push(show(&clock, &format!("req {i}"), outcome));
        }
        lines
    });
    assert_eq!(
        lines,
        [
            "  req 1: ok 1 at 0ms",
            "  req 2: ok 2 at 100ms",
            "  req 3: ok 3 at 200ms",
        ]
    );
    let stats = admission.stats();
    assert_eq!((stats.admitted, stats.shed, stats.in_flight), (3, 0, 0));
}

#[test]
fn scenario_4_status_mapping() {
    let shed: BoxError = Overloaded::new().into();
    let other: BoxError = "boom".into();
    let line = format!(
        "  Overloaded::new() -> {}, \"boom\" -> {}",
        status(&shed),
        status(&other)
    );
    assert_eq!(line, "  Overloaded::new() -> 503, \"boom\" -> 500");
    assert_eq!(shed.to_string(), "service overloaded");
    // downcast_ref works as well as is::<Overloaded>().
    assert_eq!(
        shed.downcast_ref::<Overloaded>().map(Overloaded::cause),
        Some(OverloadCause::Shed)
    );
    // A queue timeout is an Overloaded too: also 503.
    let timed_out: BoxError = Overloaded::queue_timeout().into();
    assert_eq!(status(&timed_out), 503);
    // A NotReady misuse is not overload.
    let misuse: BoxError = NotReady::new().into();
    assert_eq!(status(&misuse), 500);
}
