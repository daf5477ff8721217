#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! Properties of the adaptive limits under random samples and random
//! interleavings of admissions, completions, queued waiters and time:
//!
//! * every algorithm's limit stays within its bounds, whatever it is fed;
//! * the semaphore's limit is always the controller's;
//! * in-flight work never grows beyond the current limit — including while
//!   the limit is being lowered under load: permits out before a lowering
//!   finish, and nothing new is admitted until in-flight is below the limit.

use edgeshed::limit::adaptive::{
    Aimd, Bounds, Controller, Gradient2, Limit, Outcome, Sample, Started, Vegas,
};
use edgeshed::semaphore::{Acquire, Permit, Semaphore};
use edgeshed::time::{Instant, ManualClock};
use proptest::prelude::*;
use proptest::sample::Index;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

#[derive(Clone, Copy, Debug)]
enum Algorithm {
    Aimd,
    Gradient2,
    Vegas,
}

/// One of the three algorithms behind one type.
#[derive(Clone, Debug)]
enum Any {
    Aimd(Aimd),
    Gradient2(Gradient2),
    Vegas(Vegas),
}

impl Any {
    fn new(algorithm: Algorithm, bounds: Bounds) -> Self {
        match algorithm {
            Algorithm::Aimd => Any::Aimd(Aimd::new(bounds, 0.9)),
            Algorithm::Gradient2 => Any::Gradient2(Gradient2::new(bounds)),
            Algorithm::Vegas => Any::Vegas(Vegas::new(bounds)),
        }
    }
}

impl Limit for Any {
    fn bounds(&self) -> Bounds {
        match self {
            Any::Aimd(l) => l.bounds(),
            Any::Gradient2(l) => l.bounds(),
            Any::Vegas(l) => l.bounds(),
        }
    }
    fn limit(&self) -> usize {
        match self {
            Any::Aimd(l) => l.limit(),
            Any::Gradient2(l) => l.limit(),
            Any::Vegas(l) => l.limit(),
        }
    }
    fn update(&mut self, sample: &Sample) -> usize {
        match self {
            Any::Aimd(l) => l.update(sample),
            Any::Gradient2(l) => l.update(sample),
            Any::Vegas(l) => l.update(sample),
        }
    }
}

fn algorithm() -> impl Strategy<Value = Algorithm> {
    prop_oneof![
        Just(Algorithm::Aimd),
        Just(Algorithm::Gradient2),
        Just(Algorithm::Vegas)
    ]
}

fn bounds() -> impl Strategy<Value = Bounds> {
    (1usize..6, 0usize..6, 0usize..8).prop_map(|(min, up, span)| {
        let max = min + span;
        Bounds::new(min + up.min(span), min, max).unwrap()
    })
}

#[derive(Clone, Debug)]
enum Op {
    /// A caller tries to get in at once.
    TryAdmit,
    /// A caller queues for a permit (and is polled once).
    Wait,
    /// Polls every queued caller.
    PollWaiters,
    /// A call in flight completes: served, dropped or ignored.
    Complete(Index, Outcome),
    Advance(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => Just(Op::TryAdmit),
        2 => Just(Op::Wait),
        2 => Just(Op::PollWaiters),
        4 => (any::<Index>(), prop_oneof![
            5 => Just(Outcome::Served),
            3 => Just(Outcome::Dropped),
            2 => Just(Outcome::Ignored),
        ])
        .prop_map(|(i, outcome)| Op::Complete(i, outcome)),
        3 => (0u64..400).prop_map(Op::Advance),
    ]
}

fn run(algorithm: Algorithm, bounds: Bounds, ops: &[Op]) {
    let clock = ManualClock::new();
    let semaphore = Semaphore::new(1);
    let controller = Controller::new(Any::new(algorithm, bounds), semaphore.clone());
    let mut running: Vec<(Started, Permit)> = Vec::new();
    let mut waiting: Vec<Pin<Box<Acquire>>> = Vec::new();
    let mut cx = Context::from_waker(Waker::noop());
    let mut before = semaphore.in_use();
    for op in ops {
        match op {
            Op::TryAdmit => {
                if let Ok(permit) = semaphore.try_acquire() {
                    assert!(
                        semaphore.in_use() <= semaphore.limit(),
                        "admitted beyond the limit"
                    );
                    running.push((controller.start(&clock), permit));
                }
            }
            Op::Wait => waiting.push(Box::pin(semaphore.acquire())),
            Op::PollWaiters => {}
            Op::Complete(index, outcome) => {
                if !running.is_empty() {
                    let (started, permit) = running.remove(index.index(running.len()));
                    controller.finish(started, &clock, *outcome);
                    drop(permit);
                }
            }
            Op::Advance(ms) => clock.advance(Duration::from_millis(*ms)),
        }
        if matches!(op, Op::Wait | Op::PollWaiters) {
            let mut still = Vec::new();
            for mut acquire in waiting.drain(..) {
                match acquire.as_mut().poll(&mut cx) {
                    Poll::Ready(permit) => {
                        running.push((controller.start(&clock), permit.unwrap()));
                    }
                    Poll::Pending => still.push(acquire),
                }
            }
            waiting = still;
        }
        let limit = controller.limit();
        assert!(
            (bounds.min()..=bounds.max()).contains(&limit),
            "limit {limit} out of {bounds:?}"
        );
        assert_eq!(semaphore.limit(), limit);
        let in_use = semaphore.in_use();
        // Above the limit only by permits that were out before it was lowered.
        assert!(
            in_use <= limit.max(before),
            "{in_use} in flight, limit {limit}, {before} before"
        );
        before = in_use;
    }
    drop(waiting);
    drop(running);
    assert_eq!(semaphore.in_use(), 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// Whatever the samples, the limit stays within the bounds.
    #[test]
    fn limit_stays_within_bounds(
        algorithm in algorithm(),
        bounds in bounds(),
        samples in prop::collection::vec((0u64..50, 0u64..500, 0usize..80, any::<bool>()), 1..400),
    ) {
        let mut limit = Any::new(algorithm, bounds);
        prop_assert_eq!(limit.limit(), bounds.initial());
        let mut now = 0u64;
        for (gap, rtt, in_flight, dropped) in samples {
            now += gap;
            let sample = Sample::new(Instant::from_origin(Duration::from_millis(now)), Duration::from_millis(rtt), in_flight, dropped);
            let next = limit.update(&sample);
            prop_assert!((bounds.min()..=bounds.max()).contains(&next), "{} out of {:?}", next, bounds);
            prop_assert_eq!(next, limit.limit());
        }
    }

    /// In-flight never grows beyond the limit the controller sets.
    #[test]
    fn in_flight_never_exceeds_the_limit(
        algorithm in algorithm(),
        bounds in bounds(),
        ops in prop::collection::vec(op(), 1..200),
    ) {
        run(algorithm, bounds, &ops);
    }
}
