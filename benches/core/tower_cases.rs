//! edgeshed vs tower 0.5: `ConcurrencyLimit` and `LoadShed`.

use super::harness::{timed, Case, Group};
use super::workloads::{contend, drive, echo_yield, inner, CALLERS, CONTENDED_LIMIT};
use std::fmt::Debug;
use std::future::poll_fn;
use tower::Service;
use tower_layer::Layer;

pub(crate) fn uncontended(n: u64) -> Group {
    const LIMIT: usize = 64;
    let cases = vec![
        Case::new("baseline: inner service_fn, no limiter", |rt, n| {
            let mut svc = inner();
            timed(rt, drive(&mut svc, n), n)
        }),
        Case::new("edgeshed CL: ConcurrencyLimit::new(inner, 64)", |rt, n| {
            let mut svc = edgeshed::ConcurrencyLimit::new(inner(), LIMIT).unwrap();
            timed(rt, drive(&mut svc, n), n)
        }),
        Case::new(
            "tower CL: tower::limit::ConcurrencyLimit::new(inner, 64)",
            |rt, n| {
                let mut svc = tower::limit::ConcurrencyLimit::new(inner(), LIMIT);
                timed(rt, drive(&mut svc, n), n)
            },
        ),
        Case::new(
            "edgeshed LS+CL: LoadShed::new(ConcurrencyLimit)",
            |rt, n| {
                let mut svc = edgeshed::LoadShed::new(
                    edgeshed::ConcurrencyLimit::new(inner(), LIMIT).unwrap(),
                );
                timed(rt, drive(&mut svc, n), n)
            },
        ),
        Case::new("tower LS+CL: LoadShed::new(ConcurrencyLimit)", |rt, n| {
            let mut svc = tower::load_shed::LoadShed::new(tower::limit::ConcurrencyLimit::new(
                inner(),
                LIMIT,
            ));
            timed(rt, drive(&mut svc, n), n)
        }),
        Case::new("edgeshed shed: ConcurrencyLimitLayer::shed(64)", |rt, n| {
            let mut svc = edgeshed::ConcurrencyLimitLayer::shed(LIMIT)
                .unwrap()
                .layer(inner());
            timed(rt, drive(&mut svc, n), n)
        }),
    ];
    Group {
        title: "1. uncontended: limit 64, one caller, ready + call + await",
        ops: n,
        arg: n,
        cases,
        ratios: vec![(1, 2), (3, 4), (5, 4)],
        baseline: None,
        versus: "edgeshed/tower",
    }
}

pub(crate) fn contended(m: u64, local: bool) -> Group {
    let cases = vec![
        Case::new("baseline: inner (yields once), no limiter", move |rt, m| {
            contend(rt, local, tower::service_fn(echo_yield), m)
        }),
        Case::new(
            "edgeshed CL: ConcurrencyLimit::new(inner, 4)",
            move |rt, m| {
                let svc =
                    edgeshed::ConcurrencyLimit::new(tower::service_fn(echo_yield), CONTENDED_LIMIT)
                        .unwrap();
                contend(rt, local, svc, m)
            },
        ),
        Case::new(
            "tower CL: tower::limit::ConcurrencyLimit::new(inner, 4)",
            move |rt, m| {
                let svc = tower::limit::ConcurrencyLimit::new(
                    tower::service_fn(echo_yield),
                    CONTENDED_LIMIT,
                );
                contend(rt, local, svc, m)
            },
        ),
    ];
    Group {
        title: if local {
            "2b. contended, same workload as 64 spawn_local tasks on a LocalSet"
        } else {
            "2. contended: limit 4, 64 callers (FuturesUnordered), response yields once"
        },
        ops: m * CALLERS as u64,
        arg: m,
        cases,
        ratios: vec![(1, 2)],
        baseline: Some(0),
        versus: "edgeshed/tower",
    }
}

pub(crate) fn saturated(n: u64) -> Group {
    let cases = vec![
        Case::new(
            "edgeshed LS+CL: LoadShed::new(ConcurrencyLimit), full",
            |rt, n| {
                let limited = edgeshed::ConcurrencyLimit::new(inner(), 1).unwrap();
                let mut holder = limited.clone();
                hold_permit(rt, &mut holder);
                let mut svc = edgeshed::LoadShed::new(limited);
                let d = timed(rt, drive(&mut svc, n), 0);
                drop(holder);
                d
            },
        ),
        Case::new(
            "tower LS+CL: LoadShed::new(ConcurrencyLimit), full",
            |rt, n| {
                let limited = tower::limit::ConcurrencyLimit::new(inner(), 1);
                let mut holder = limited.clone();
                hold_permit(rt, &mut holder);
                let mut svc = tower::load_shed::LoadShed::new(limited);
                let d = timed(rt, drive(&mut svc, n), 0);
                drop(holder);
                d
            },
        ),
        Case::new(
            "edgeshed shed: ConcurrencyLimitLayer::shed(1), full",
            |rt, n| {
                let limited = edgeshed::ConcurrencyLimitLayer::shed(1)
                    .unwrap()
                    .layer(inner());
                let mut holder = limited.clone();
                hold_permit(rt, &mut holder);
                let mut svc = limited;
                let d = timed(rt, drive(&mut svc, n), 0);
                drop(holder);
                d
            },
        ),
    ];
    Group {
        title: "3. shed under saturation: limit 1 held, ready + call -> Overloaded",
        ops: n,
        arg: n,
        cases,
        ratios: vec![(0, 1), (2, 1)],
        baseline: None,
        versus: "edgeshed/tower",
    }
}

/// Reserves the only permit in `svc` (poll_ready without call) and keeps it.
pub(crate) fn hold_permit<S: Service<u64>>(rt: &tokio::runtime::Runtime, svc: &mut S)
where
    S::Error: Debug,
{
    rt.block_on(poll_fn(|cx| svc.poll_ready(cx))).unwrap();
}
