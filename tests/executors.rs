#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! The same scenarios on two executors: `futures`' `LocalPool` with a
//! `ManualClock`, and tokio's current-thread runtime with its paused clock
//! behind a small `Clock` adapter.

mod support;

use edgeshed::admission::{Admission, Policy};
use edgeshed::error::{BoxError, OverloadCause, Overloaded};
use edgeshed::limit::GlobalConcurrencyLimitLayer;
use edgeshed::time::{Clock, Instant, ManualClock, RealClock};
use futures::future::BoxFuture;
use futures::task::LocalSpawnExt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use support::poll_once;
use tower::ServiceExt;
use tower_layer::Layer;
use tower_service::Service;

const MS: Duration = Duration::from_millis(1);
/// How long the inner service takes per request.
const WORK: Duration = Duration::from_millis(10);

/// tokio's (pausable) clock as an edgeshed `Clock`. Its `Sleep` is `!Unpin`.
#[derive(Clone, Debug)]
struct TokioClock {
    start: tokio::time::Instant,
}

impl TokioClock {
    fn new() -> Self {
        Self {
            start: tokio::time::Instant::now(),
        }
    }
}

impl Clock for TokioClock {
    type Sleep = tokio::time::Sleep;

    fn now(&self) -> Instant {
        Instant::from_origin(tokio::time::Instant::now().saturating_duration_since(self.start))
    }

    fn sleep_until(&self, deadline: Instant) -> tokio::time::Sleep {
        tokio::time::sleep_until(self.start + deadline.since_origin())
    }
}

/// tokio's sleeps complete: it may arm queue timeouts.
impl RealClock for TokioClock {}

/// Counts the requests inside the inner service, and the peak.
#[derive(Debug, Default)]
struct Gauge {
    inside: AtomicUsize,
    peak: AtomicUsize,
}

struct Inside(Arc<Gauge>);

impl Inside {
    fn enter(gauge: &Arc<Gauge>) -> Self {
        let now = gauge.inside.fetch_add(1, Ordering::SeqCst) + 1;
        gauge.peak.fetch_max(now, Ordering::SeqCst);
        Self(Arc::clone(gauge))
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        self.0.inside.fetch_sub(1, Ordering::SeqCst);
    }
}

/// An inner service whose every request takes `WORK` on the clock.
#[derive(Clone)]
struct Slow<C> {
    clock: C,
    gauge: Arc<Gauge>,
}

impl<C> Service<u32> for Slow<C>
where
    C: Clock + Send + 'static,
    C::Sleep: Send + 'static,
{
    type Response = u32;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<u32, BoxError>> + Send>>;

    fn poll_ready(
        &mut self,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), BoxError>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, id: u32) -> Self::Future {
        let inside = Inside::enter(&self.gauge);
        let sleep = self.clock.sleep_until(self.clock.now() + WORK);
        Box::pin(async move {
            sleep.await;
            drop(inside);
            Ok(id)
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Outcome {
    Ok(u32),
    Shed,
    QueueTimeout,
}

fn outcome(result: Result<u32, BoxError>) -> Outcome {
    match result {
        Ok(value) => Outcome::Ok(value),
        Err(error) => match error.downcast_ref::<Overloaded>().map(Overloaded::cause) {
            Some(OverloadCause::Shed) => Outcome::Shed,
            Some(OverloadCause::QueueTimeout) => Outcome::QueueTimeout,
            _ => panic!("unexpected error: {error}"),
        },
    }
}

/// Clients sending requests one after another through the shared limit.
struct Scenario<C: Clock> {
    admission: Admission<C>,
    gauge: Arc<Gauge>,
    clients: Vec<BoxFuture<'static, Vec<Outcome>>>,
}

fn scenario<C>(clock: C, policy: Policy, limit: usize, requests: &[Vec<u32>]) -> Scenario<C>
where
    C: RealClock + Send + Sync + 'static,
    C::Sleep: Send + 'static,
{
    let gauge = Arc::new(Gauge::default());
    let admission = Admission::new(limit, policy, clock.clone()).unwrap();
    let layer = GlobalConcurrencyLimitLayer::new(admission.clone());
    let clients = requests
        .iter()
        .map(|ids| {
            let mut service = layer.layer(Slow {
                clock: clock.clone(),
                gauge: Arc::clone(&gauge),
            });
            let ids = ids.clone();
            let client: BoxFuture<'static, Vec<Outcome>> = Box::pin(async move {
                let mut outcomes = Vec::new();
                for id in ids {
                    let result = match service.ready().await {
                        Ok(ready) => ready.call(id).await,
                        Err(error) => Err(error),
                    };
                    outcomes.push(outcome(result));
                }
                outcomes
            });
            client
        })
        .collect();
    Scenario {
        admission,
        gauge,
        clients,
    }
}

/// Runs the clients on a `LocalPool`, moving the manual clock forward
/// whenever every task is stalled.
fn run_local(
    clock: &ManualClock,
    clients: Vec<BoxFuture<'static, Vec<Outcome>>>,
) -> Vec<Vec<Outcome>> {
    let mut pool = futures::executor::LocalPool::new();
    let spawner = pool.spawner();
    let handles: Vec<_> = clients
        .into_iter()
        .map(|client| spawner.spawn_local_with_handle(client).unwrap())
        .collect();
    let mut all = futures::future::join_all(handles);
    for _ in 0..10_000 {
        pool.run_until_stalled();
        if let std::task::Poll::Ready(outcomes) = poll_once(&mut all) {
            return outcomes;
        }
        assert!(clock.armed_timers() > 0, "stalled with no timer armed");
        clock.advance(MS);
    }
    panic!("the clients did not finish");
}

/// Runs the clients as tokio tasks on a current-thread runtime with paused time.
fn run_tokio<F>(build: F) -> (Vec<Vec<Outcome>>, Duration, Scenario<TokioClock>)
where
    F: FnOnce(TokioClock) -> Scenario<TokioClock>,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        let clock = TokioClock::new();
        let mut scenario = build(clock.clone());
        let handles: Vec<_> = scenario.clients.drain(..).map(tokio::spawn).collect();
        let mut outcomes = Vec::new();
        for handle in handles {
            outcomes.push(handle.await.unwrap());
        }
        (outcomes, clock.now().since_origin(), scenario)
    })
}

/// 16 clients, two requests each, through a limit of 4 (wait policy).
fn sixteen_clients() -> Vec<Vec<u32>> {
    (0..16)
        .map(|client| vec![client * 10, client * 10 + 1])
        .collect()
}

fn all_ok(requests: &[Vec<u32>]) -> Vec<Vec<Outcome>> {
    requests
        .iter()
        .map(|ids| ids.iter().map(|&id| Outcome::Ok(id)).collect())
        .collect()
}

fn assert_wait_scenario<C: Clock>(
    scenario: &Scenario<C>,
    outcomes: &[Vec<Outcome>],
    elapsed: Duration,
) {
    assert_eq!(outcomes, all_ok(&sixteen_clients()));
    assert_eq!(scenario.gauge.peak.load(Ordering::SeqCst), 4);
    assert_eq!(scenario.gauge.inside.load(Ordering::SeqCst), 0);
    // 32 requests, always 4 at a time, 10 ms each.
    assert_eq!(elapsed, 80 * MS);
    let stats = scenario.admission.stats();
    assert_eq!((stats.in_flight, stats.queued, stats.admitted), (0, 0, 32));
    assert_eq!(scenario.admission.semaphore().available_permits(), 4);
}

#[test]
fn local_pool_sixteen_clients_through_a_limit_of_four() {
    let clock = ManualClock::new();
    let mut scenario = scenario(clock.clone(), Policy::Wait, 4, &sixteen_clients());
    let outcomes = run_local(&clock, std::mem::take(&mut scenario.clients));
    assert_wait_scenario(&scenario, &outcomes, clock.now().since_origin());
    assert_eq!(clock.armed_timers(), 0);
}

#[test]
fn tokio_sixteen_clients_through_a_limit_of_four() {
    let (outcomes, elapsed, scenario) =
        run_tokio(|clock| scenario(clock, Policy::Wait, 4, &sixteen_clients()));
    assert_wait_scenario(&scenario, &outcomes, elapsed);
}

/// 8 clients at once, limit 2, at most 3 waiting for at most 15 ms: two run,
/// three queue (two of them get in at 10 ms, the third times out at 15 ms),
/// three are shed at once.
fn bounded_queue_policy() -> Policy {
    Policy::Queue {
        max_queue: 3,
        timeout: 15 * MS,
    }
}

fn eight_clients() -> Vec<Vec<u32>> {
    (0..8).map(|client| vec![client]).collect()
}

fn assert_queue_scenario<C: Clock>(
    scenario: &Scenario<C>,
    outcomes: &[Vec<Outcome>],
    elapsed: Duration,
) {
    let expected: Vec<Vec<Outcome>> = vec![
        vec![Outcome::Ok(0)],
        vec![Outcome::Ok(1)],
        vec![Outcome::Ok(2)],
        vec![Outcome::Ok(3)],
        vec![Outcome::QueueTimeout],
        vec![Outcome::Shed],
        vec![Outcome::Shed],
        vec![Outcome::Shed],
    ];
    assert_eq!(outcomes, expected);
    assert_eq!(scenario.gauge.peak.load(Ordering::SeqCst), 2);
    assert_eq!(elapsed, 20 * MS);
    let stats = scenario.admission.stats();
    assert_eq!(
        (
            stats.in_flight,
            stats.queued,
            stats.admitted,
            stats.shed,
            stats.queue_timeouts
        ),
        (0, 0, 4, 3, 1)
    );
    assert_eq!(scenario.admission.semaphore().available_permits(), 2);
}

#[test]
fn local_pool_bounded_queue_with_timeouts() {
    let clock = ManualClock::new();
    let mut scenario = scenario(clock.clone(), bounded_queue_policy(), 2, &eight_clients());
    let outcomes = run_local(&clock, std::mem::take(&mut scenario.clients));
    assert_queue_scenario(&scenario, &outcomes, clock.now().since_origin());
    assert_eq!(clock.armed_timers(), 0);
}

#[test]
fn tokio_bounded_queue_with_timeouts() {
    let (outcomes, elapsed, scenario) =
        run_tokio(|clock| scenario(clock, bounded_queue_policy(), 2, &eight_clients()));
    assert_queue_scenario(&scenario, &outcomes, elapsed);
}

#[test]
fn tokio_clock_sleeps_are_not_unpin_and_still_time_out_admission() {
    // Admission::admit boxes the clock's sleep, so a !Unpin Sleep is fine.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        let clock = TokioClock::new();
        let admission = Admission::new(1, bounded_queue_policy(), clock.clone()).unwrap();
        let held = admission.admit().await.unwrap();
        let error = admission.admit().await.unwrap_err();
        assert_eq!(
            error.overloaded().map(|o| o.cause()),
            Some(OverloadCause::QueueTimeout)
        );
        assert_eq!(clock.now().since_origin(), 15 * MS);
        drop(held);
        assert_eq!(admission.stats().in_flight, 0);
    });
}
