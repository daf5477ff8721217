//! Random fan-outs against real `Admission`s on a manual clock: 2–4
//! origins at limits 1–3 (fifo or codel, some under a "fleet budget": one
//! more limit shared by two isolates), requests of random criticality and
//! key calling 1–4 of them. At every quiet moment (no task left to run):
//!
//! - **the order**: no call waits for a permit while a permit it holds back
//!   ranks later — for a required call, every sibling stopped at the gate
//!   holds an earlier origin;
//! - **no idle origin**: every waiter waits, through the holders of what it
//!   waits for, on some call that is fetching; a waiter that does not (its
//!   permit's holders are themselves stuck, or a permit is free) may stay so
//!   for at most one tick;
//! - at the end, every request finished within its bounds (the sum of its
//!   waits' timeouts and of its calls' durations) and every permit is back.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]

#[path = "support/fanout_kit.rs"]
mod kit;
#[path = "support/fanout_sim.rs"]
mod sim;

use edgeshed::admission::Criticality;
use kit::Executor;
use proptest::prelude::*;
use sim::{CallSpec, OriginSpec, RequestSpec, Sim, MS};

fn origin_spec() -> impl Strategy<Value = OriginSpec> {
    (
        1..=3usize,
        1..=4usize,
        2..=12u64,
        any::<bool>(),
        proptest::option::of(1..=3usize),
    )
        .prop_flat_map(|(limit, max_queue, timeout, codel, budget)| {
            let target = if codel {
                (1..timeout).prop_map(Some).boxed()
            } else {
                Just(None).boxed()
            };
            target.prop_map(move |codel| OriginSpec {
                limit,
                max_queue,
                timeout,
                codel,
                budget,
            })
        })
}

fn request_spec(origins: usize) -> impl Strategy<Value = RequestSpec> {
    let criticality = prop_oneof![
        Just(Criticality::Critical),
        Just(Criticality::Default),
        Just(Criticality::Sheddable)
    ];
    let call =
        (0..origins, prop::bool::weighted(0.75), 1..=4u64).prop_map(|(origin, required, ticks)| {
            CallSpec {
                origin,
                required,
                ticks,
            }
        });
    let calls = prop::collection::vec(call, 1..=4);
    (
        0..=8u64,
        0..2usize,
        criticality,
        proptest::option::of(0..3u8),
        calls,
    )
        .prop_map(|(at, isolate, criticality, key, calls)| RequestSpec {
            at,
            isolate,
            criticality,
            key,
            calls,
        })
}

fn scenario() -> impl Strategy<Value = (Vec<OriginSpec>, Vec<RequestSpec>)> {
    prop::collection::vec(origin_spec(), 2..=4).prop_flat_map(|origins| {
        let requests = prop::collection::vec(request_spec(origins.len()), 2..=10);
        (Just(origins), requests)
    })
}

fn run(origins: Vec<OriginSpec>, requests: Vec<RequestSpec>) -> Result<(), TestCaseError> {
    let mut sim = Sim::new(origins);
    let mut executor = Executor::default();
    let mut stuck_before: Vec<usize> = Vec::new();
    let last = requests.iter().map(|r| r.at).max().unwrap_or(0);
    for tick in 0..=1_000u64 {
        for request in requests.iter().filter(|r| r.at == tick) {
            sim.spawn(&mut executor, request);
        }
        executor.run();
        sim.check_order()
            .map_err(|e| TestCaseError::fail(format!("t={tick} ms: {e}; {}", sim.describe())))?;
        let stuck = sim.stuck();
        if let Some(call) = stuck.iter().find(|call| stuck_before.contains(call)) {
            return Err(TestCaseError::fail(format!(
                "t={tick} ms: call {call} waits on no call that is fetching, for over a tick (origin idle with waiters); {}",
                sim.describe()
            )));
        }
        stuck_before = stuck;
        if tick >= last && executor.live() == 0 {
            break;
        }
        sim.clock.advance(MS);
    }
    prop_assert_eq!(executor.live(), 0, "every request finished");
    for (at, bound, end) in &sim.ends {
        let took = end.get().unwrap() - at;
        prop_assert!(
            took <= *bound,
            "a request took {} ms, over its bound of {} ms",
            took,
            bound
        );
    }
    let all = sim
        .locals
        .iter()
        .flatten()
        .chain(sim.budgets.iter().flatten());
    for admission in all {
        let stats = admission.stats();
        prop_assert_eq!(
            (stats.in_flight, stats.queued),
            (0, 0),
            "every permit is back"
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// See the module docs.
    #[test]
    fn fan_outs_take_their_permits_in_one_order_and_never_deadlock((origins, requests) in scenario()) {
        run(origins, requests)?;
    }
}
