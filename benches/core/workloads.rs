//! The workloads, generic so that every library gets the same code around it,
//! and the untimed check that the contended workload really is contended.

use super::harness::{timed, Sample};
use futures::stream::{FuturesUnordered, StreamExt};
use std::cell::Cell;
use std::convert::Infallible;
use std::fmt::Debug;
use std::future::{poll_fn, Future};
use std::hint::black_box;
use std::pin::Pin;
use std::task::{Context, Poll};
use tower::Service;

pub(crate) const CALLERS: usize = 64;
pub(crate) const CONTENDED_LIMIT: usize = 4;

/// The uncontended / saturation loop: `n` times ready + call + await.
/// Returns how many calls succeeded.
pub(crate) async fn drive<S>(svc: &mut S, n: u64) -> u64
where
    S: Service<u64, Response = u64>,
    S::Error: Debug,
{
    let mut ok = 0;
    for i in 0..n {
        if let Err(e) = poll_fn(|cx| svc.poll_ready(cx)).await {
            panic!("poll_ready failed: {e:?}");
        }
        if black_box(svc.call(black_box(i)).await).is_ok() {
            ok += 1;
        }
    }
    ok
}

/// Returns `Pending` once (waking itself at once), then `Ready`: the response
/// future's single yield that keeps a permit held across a scheduler turn.
pub(crate) struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

/// 64 callers (each with its own clone of the service, made before timing),
/// polled by one `FuturesUnordered` inside the current-thread runtime; each
/// does `m` ready + call + await. Returns the successful calls.
pub(crate) async fn drive_contended<S>(callers: Vec<S>, m: u64) -> u64
where
    S: Service<u64, Response = u64>,
    S::Error: Debug,
{
    let mut set: FuturesUnordered<_> = callers
        .into_iter()
        .map(|mut svc| async move { drive(&mut svc, m).await })
        .collect();
    let mut ok = 0;
    while let Some(n) = set.next().await {
        ok += n;
    }
    ok
}

/// The same 64 callers as spawned tasks on a `LocalSet` (`spawn_local`)
/// instead of one `FuturesUnordered`.
pub(crate) async fn drive_local<S>(callers: Vec<S>, m: u64) -> u64
where
    S: Service<u64, Response = u64> + 'static,
    S::Error: Debug,
{
    let local = tokio::task::LocalSet::new();
    local
        .run_until(async move {
            let tasks: Vec<_> = callers
                .into_iter()
                .map(|mut svc| tokio::task::spawn_local(async move { drive(&mut svc, m).await }))
                .collect();
            let mut ok = 0;
            for task in tasks {
                ok += task.await.unwrap();
            }
            ok
        })
        .await
}

/// Runs the contended workload over 64 clones of `svc` (cloned before timing)
/// under the chosen driver.
pub(crate) fn contend<S>(rt: &tokio::runtime::Runtime, local: bool, svc: S, m: u64) -> Sample
where
    S: Service<u64, Response = u64> + Clone + 'static,
    S::Error: Debug,
{
    let expect = m * CALLERS as u64;
    let callers = vec![svc; CALLERS];
    if local {
        timed(rt, drive_local(callers, m), expect)
    } else {
        timed(rt, drive_contended(callers, m), expect)
    }
}

// Inner services.
pub(crate) fn echo(x: u64) -> std::future::Ready<Result<u64, Infallible>> {
    std::future::ready(Ok(x))
}

pub(crate) async fn echo_yield(x: u64) -> Result<u64, Infallible> {
    YieldOnce(false).await;
    Ok(x)
}

/// The inner service of the uncontended and saturation cases: an echo whose
/// response is immediately ready (a zero-sized `ServiceFn`, called directly).
pub(crate) fn inner() -> impl Service<u64, Response = u64, Error = Infallible> + Clone {
    tower::service_fn(echo)
}

thread_local! {
    static IN_FLIGHT: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

/// `echo_yield` that also records the peak number of calls in flight.
pub(crate) async fn tracked_echo(x: u64) -> Result<u64, Infallible> {
    let now = IN_FLIGHT.with(|c| {
        c.set(c.get() + 1);
        c.get()
    });
    PEAK.with(|p| p.set(p.get().max(now)));
    YieldOnce(false).await;
    IN_FLIGHT.with(|c| c.set(c.get() - 1));
    Ok(x)
}

/// Runs the contended workload once over `tracked_echo`: the peak in flight
/// must reach the limit (and never exceed it).
pub(crate) fn check_contention<S>(rt: &tokio::runtime::Runtime, name: &str, svc: S)
where
    S: Service<u64, Response = u64> + Clone,
    S::Error: Debug,
{
    PEAK.with(|p| p.set(0));
    let m = 50;
    let ok = rt.block_on(drive_contended(vec![svc; CALLERS], m));
    assert_eq!(ok, m * CALLERS as u64);
    let peak = PEAK.with(Cell::get);
    assert_eq!(
        peak, CONTENDED_LIMIT,
        "{name}: peak in flight {peak}, expected {CONTENDED_LIMIT}"
    );
    println!(
        "check: {name} contended workload peaks at {peak} in flight (limit {CONTENDED_LIMIT})"
    );
}
