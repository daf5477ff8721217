//! The criticality path against the plain path: the same admission, a call
//! with a criticality (and a reserve to respect) against a call without.

use super::harness::{timed, Case, Group};
use super::workloads::{drive, inner};
use edgeshed::admission::{Admission, Call, Criticality, Options, Policy, Reserve};
use edgeshed::limit::ClassifiedLimitLayer;
use edgeshed::time::ManualClock;
use std::future::Future;
use std::hint::black_box;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use tower_layer::Layer;

const LIMIT: usize = 64;

fn with_reserve() -> Admission<ManualClock> {
    let options = Options::new().reserve(Reserve::default());
    Admission::with_options(LIMIT, Policy::Shed, options, ManualClock::new()).unwrap()
}

/// `n` times: take a permit without waiting and give it back.
fn try_loop(admission: &Admission<ManualClock>, criticality: Option<Criticality>, n: u64) -> u64 {
    let mut ok = 0;
    for _ in 0..n {
        let permit = match criticality {
            None => admission.try_admit(),
            Some(criticality) => admission.try_admit_as(black_box(criticality)),
        };
        ok += u64::from(black_box(permit).is_some());
    }
    ok
}

/// `n` times: an admission future polled once (admitted at once) and dropped.
fn admit_loop(admission: &Admission<ManualClock>, call: Option<&Call>, n: u64) -> u64 {
    let mut cx = Context::from_waker(Waker::noop());
    let mut ok = 0;
    for _ in 0..n {
        let mut admit = match call {
            None => admission.admit(),
            Some(call) => admission.admit_call(black_box(call.clone())),
        };
        if let Poll::Ready(Ok(permit)) = Pin::new(&mut admit).poll(&mut cx) {
            drop(black_box(permit));
            ok += 1;
        }
    }
    ok
}

pub(crate) fn admission(n: u64) -> Group {
    let sheddable = Call::new(Criticality::Sheddable);
    let keyed = Call::new(Criticality::Sheddable).with_key("tenant-1");
    let cases = vec![
        Case::new("plain: try_admit(), no reserve", move |rt, n| {
            let admission =
                Admission::with_options(LIMIT, Policy::Shed, Options::new(), ManualClock::new())
                    .unwrap();
            timed(rt, async { try_loop(&admission, None, n) }, n)
        }),
        Case::new(
            "criticality: try_admit_as(Sheddable), reserve",
            move |rt, n| {
                let admission = with_reserve();
                timed(
                    rt,
                    async { try_loop(&admission, Some(Criticality::Sheddable), n) },
                    n,
                )
            },
        ),
        Case::new(
            "criticality: try_admit_as(Critical), reserve",
            move |rt, n| {
                let admission = with_reserve();
                timed(
                    rt,
                    async { try_loop(&admission, Some(Criticality::Critical), n) },
                    n,
                )
            },
        ),
        Case::new(
            "criticality: try_admit() (default), reserve",
            move |rt, n| {
                let admission = with_reserve();
                timed(rt, async { try_loop(&admission, None, n) }, n)
            },
        ),
        Case::new("plain: admit() polled once, no reserve", move |rt, n| {
            let admission =
                Admission::with_options(LIMIT, Policy::Shed, Options::new(), ManualClock::new())
                    .unwrap();
            timed(rt, async { admit_loop(&admission, None, n) }, n)
        }),
        Case::new(
            "criticality: admit_call(Sheddable) polled once",
            move |rt, n| {
                let admission = with_reserve();
                timed(rt, async { admit_loop(&admission, Some(&sheddable), n) }, n)
            },
        ),
        Case::new(
            "keyed: admit_call(Sheddable, key) polled once",
            move |rt, n| {
                let admission = with_reserve();
                timed(rt, async { admit_loop(&admission, Some(&keyed), n) }, n)
            },
        ),
    ];
    Group {
        title: "4. criticality path vs plain path: Admission, limit 64, take + give back",
        ops: n,
        arg: n,
        cases,
        ratios: vec![(1, 0), (2, 0), (3, 0), (5, 4), (6, 4)],
        baseline: None,
        versus: "critical/plain",
    }
}

pub(crate) fn services(n: u64) -> Group {
    let cases = vec![
        Case::new("plain CL: ConcurrencyLimitLayer::shed(64)", |rt, n| {
            let mut svc = edgeshed::ConcurrencyLimitLayer::shed(LIMIT)
                .unwrap()
                .layer(inner());
            timed(rt, drive(&mut svc, n), n)
        }),
        Case::new(
            "classified: ClassifiedLimitLayer, closure -> Sheddable",
            |rt, n| {
                let mut svc = ClassifiedLimitLayer::new(with_reserve())
                    .read_call_with(|_: &u64| Call::new(Criticality::Sheddable))
                    .layer(inner());
                timed(rt, drive(&mut svc, n), n)
            },
        ),
    ];
    Group {
        title: "5. criticality per request vs the plain layer: ready + call + await, limit 64",
        ops: n,
        arg: n,
        cases,
        ratios: vec![(1, 0)],
        baseline: None,
        versus: "classified/CL",
    }
}
