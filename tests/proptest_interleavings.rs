#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! Random interleavings of the service protocol against a reference model.
//!
//! A sequence of operations — clone a service, poll its readiness, call it,
//! let a response finish, poll or drop a response, drop a service, advance
//! the clock, (resize the limit) — runs against a real `ConcurrencyLimit`
//! and against a small model of the semaphore (FIFO queue, hand-over,
//! retirement debt, queue timers). After every operation the observable
//! state must agree with the model: readiness results, response outcomes,
//! wake-ups, `Stats`, free permits and armed timers — and in-flight work
//! never exceeds the limit.

mod support;

use edgeshed::admission::{Admission, Policy};
use edgeshed::error::{BoxError, NotReady, OverloadCause, Overloaded};
use edgeshed::limit::concurrency::{ReleaseOnCompletion, ResponseFuture};
use edgeshed::limit::{ConcurrencyLimit, ConcurrencyLimitLayer};
use edgeshed::time::ManualClock;
use proptest::prelude::*;
use proptest::sample::Index;
use std::collections::VecDeque;
use std::task::Poll;
use std::time::Duration;
use support::{poll_once, CountingWaker, Origin, OriginFuture};
use tower_layer::Layer;
use tower_service::Service;

type Svc = ConcurrencyLimit<Origin, ManualClock>;
type Response = ResponseFuture<OriginFuture, ReleaseOnCompletion>;

#[derive(Clone, Debug)]
enum Op {
    Clone(Index),
    PollReady(Index),
    Call(Index),
    /// The origin answers the request of a response (the permit stays held
    /// until that response is polled).
    Finish(Index),
    PollResponse(Index),
    DropResponse(Index),
    DropService(Index),
    Advance(u64),
    SetLimit(usize),
}

fn op_strategy(resize: bool) -> BoxedStrategy<Op> {
    let ops = prop_oneof![
        3 => any::<Index>().prop_map(Op::Clone),
        6 => any::<Index>().prop_map(Op::PollReady),
        4 => any::<Index>().prop_map(Op::Call),
        3 => any::<Index>().prop_map(Op::Finish),
        3 => any::<Index>().prop_map(Op::PollResponse),
        1 => any::<Index>().prop_map(Op::DropResponse),
        1 => any::<Index>().prop_map(Op::DropService),
        2 => (0u64..15).prop_map(Op::Advance),
    ];
    if resize {
        prop_oneof![8 => ops, 1 => (0usize..=5).prop_map(Op::SetLimit)].boxed()
    } else {
        ops.boxed()
    }
}

fn policy_strategy() -> impl Strategy<Value = Policy> {
    prop_oneof![
        Just(Policy::Wait),
        Just(Policy::Shed),
        queue_policy_strategy(),
    ]
}

fn queue_policy_strategy() -> impl Strategy<Value = Policy> {
    // A zero timeout with `max_queue > 0` is refused at construction
    // (tests/validation.rs); with `max_queue: 0` it sheds and stays allowed.
    (0usize..4, 0u64..25).prop_map(|(max_queue, timeout)| Policy::Queue {
        max_queue,
        timeout: Duration::from_millis(timeout.max(u64::from(max_queue > 0))),
    })
}

/// The model's view of one service clone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Idle,
    /// In the semaphore queue (or handed a permit it has not picked up yet).
    Waiting {
        deadline: Option<u64>,
        granted: bool,
    },
    Reserved,
    Refused(OverloadCause),
}

struct ServiceSlot {
    uid: u64,
    service: Svc,
    state: State,
    waker: CountingWaker,
    /// The waker's count when it was last registered by a pending poll.
    seen: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// Holds a permit; `finished` once the origin answered.
    Holding {
        finished: bool,
    },
    NotReady,
    Overloaded(OverloadCause),
}

struct ResponseSlot {
    id: u32,
    future: Response,
    expect: Expect,
}

/// The reference model of the admission state.
#[derive(Debug)]
struct Model {
    policy: Policy,
    limit: usize,
    available: usize,
    debt: usize,
    queue: VecDeque<u64>,
    now: u64,
    admitted: u64,
    shed: u64,
    queue_timeouts: u64,
}

impl Model {
    fn in_use(&self) -> usize {
        self.limit + self.debt - self.available
    }

    fn max_waiters(&self) -> usize {
        match self.policy {
            Policy::Queue { max_queue, .. } => max_queue,
            _ => usize::MAX,
        }
    }
}

struct Harness {
    clock: ManualClock,
    origin: Origin,
    base: Svc,
    admission: Admission<ManualClock>,
    model: Model,
    services: Vec<ServiceSlot>,
    responses: Vec<ResponseSlot>,
    next_id: u32,
    next_uid: u64,
    /// The most permits ever in use while the limit was not lowered below it.
    in_use_before: usize,
}

impl Harness {
    fn new(limit: usize, policy: Policy) -> Self {
        let clock = ManualClock::new();
        let origin = Origin::new();
        let base = ConcurrencyLimitLayer::with_policy(limit, policy, clock.clone())
            .unwrap()
            .layer(origin.clone());
        let admission = base.admission().clone();
        Self {
            clock,
            origin,
            base,
            admission,
            model: Model {
                policy,
                limit,
                available: limit,
                debt: 0,
                queue: VecDeque::new(),
                now: 0,
                admitted: 0,
                shed: 0,
                queue_timeouts: 0,
            },
            services: Vec::new(),
            responses: Vec::new(),
            next_id: 0,
            next_uid: 0,
            in_use_before: 0,
        }
    }

    fn slot_of(&mut self, uid: u64) -> &mut ServiceSlot {
        self.services
            .iter_mut()
            .find(|slot| slot.uid == uid)
            .unwrap()
    }

    /// A permit comes back: debt first, then the longest waiter, then the pool.
    fn release(&mut self) {
        if self.model.debt > 0 {
            self.model.debt -= 1;
        } else if let Some(uid) = self.model.queue.pop_front() {
            self.grant(uid);
        } else {
            self.model.available += 1;
        }
    }

    fn grant(&mut self, uid: u64) {
        let slot = self.slot_of(uid);
        match &mut slot.state {
            State::Waiting { granted, .. } => *granted = true,
            other => panic!("granted a permit to a service that is {other:?}"),
        }
    }

    fn leave_queue(&mut self, uid: u64) {
        let before = self.model.queue.len();
        self.model.queue.retain(|&queued| queued != uid);
        assert_eq!(
            self.model.queue.len() + 1,
            before,
            "service {uid} was not queued"
        );
    }

    /// What `poll_ready` must answer, updating the model.
    fn model_poll_ready(&mut self, index: usize) -> bool {
        let now = self.model.now;
        loop {
            let uid = self.services[index].uid;
            match self.services[index].state {
                State::Idle => {
                    if self.model.available > 0 {
                        assert!(self.model.queue.is_empty());
                        self.model.available -= 1;
                        self.model.admitted += 1;
                        self.services[index].state = State::Reserved;
                        continue;
                    }
                    let deadline = match self.model.policy {
                        Policy::Shed | Policy::Queue { max_queue: 0, .. } => {
                            self.model.shed += 1;
                            self.services[index].state = State::Refused(OverloadCause::Shed);
                            continue;
                        }
                        Policy::Wait => None,
                        Policy::Queue { timeout, .. } => {
                            Some(now + u64::try_from(timeout.as_millis()).unwrap())
                        }
                        other => panic!("the model does not know {other:?}"),
                    };
                    if self.model.queue.len() >= self.model.max_waiters() {
                        self.model.shed += 1;
                        self.services[index].state = State::Refused(OverloadCause::Shed);
                        continue;
                    }
                    self.model.queue.push_back(uid);
                    self.services[index].state = State::Waiting {
                        deadline,
                        granted: false,
                    };
                }
                State::Waiting { granted: true, .. } => {
                    self.model.admitted += 1;
                    self.services[index].state = State::Reserved;
                }
                State::Waiting {
                    deadline: Some(deadline),
                    granted: false,
                } if deadline <= now => {
                    self.leave_queue(uid);
                    self.model.queue_timeouts += 1;
                    self.services[index].state = State::Refused(OverloadCause::QueueTimeout);
                }
                State::Waiting { .. } => return false,
                State::Reserved | State::Refused(_) => return true,
            }
        }
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::Clone(index) => {
                let service = if self.services.is_empty() {
                    self.base.clone()
                } else {
                    self.services[index.index(self.services.len())]
                        .service
                        .clone()
                };
                self.next_uid += 1;
                self.services.push(ServiceSlot {
                    uid: self.next_uid,
                    service,
                    state: State::Idle,
                    waker: CountingWaker::new(),
                    seen: 0,
                });
            }
            Op::PollReady(index) => {
                if self.services.is_empty() {
                    return;
                }
                let index = index.index(self.services.len());
                let expected_ready = self.model_poll_ready(index);
                let slot = &mut self.services[index];
                let outcome = slot.waker.poll_ready(&mut slot.service);
                match outcome {
                    Poll::Ready(Ok(())) => assert!(expected_ready, "ready, model says pending"),
                    Poll::Pending => assert!(!expected_ready, "pending, model says ready"),
                    Poll::Ready(Err(error)) => panic!("poll_ready failed: {error}"),
                }
                slot.seen = slot.waker.count();
            }
            Op::Call(index) => {
                if self.services.is_empty() {
                    return;
                }
                let index = index.index(self.services.len());
                self.next_id += 1;
                let id = self.next_id;
                let slot = &mut self.services[index];
                let expect = match slot.state {
                    State::Reserved => {
                        slot.state = State::Idle;
                        Expect::Holding { finished: false }
                    }
                    State::Refused(cause) => {
                        slot.state = State::Idle;
                        Expect::Overloaded(cause)
                    }
                    State::Idle | State::Waiting { .. } => Expect::NotReady,
                };
                let future = slot.service.call(id);
                let reached_origin = self.origin.calls().last() == Some(&id);
                assert_eq!(reached_origin, matches!(expect, Expect::Holding { .. }));
                self.responses.push(ResponseSlot { id, future, expect });
            }
            Op::Finish(index) => {
                if self.responses.is_empty() {
                    return;
                }
                let index = index.index(self.responses.len());
                let response = &mut self.responses[index];
                if let Expect::Holding { finished } = &mut response.expect {
                    if !*finished {
                        self.origin.complete(response.id);
                        *finished = true;
                    }
                }
            }
            Op::PollResponse(index) => {
                if self.responses.is_empty() {
                    return;
                }
                let index = index.index(self.responses.len());
                let response = &mut self.responses[index];
                let outcome = poll_once(&mut response.future);
                match (response.expect, outcome) {
                    (Expect::Holding { finished: false }, Poll::Pending) => {}
                    (Expect::Holding { finished: true }, Poll::Ready(Ok(value))) => {
                        assert_eq!(value, response.id);
                        self.responses.remove(index);
                        self.release();
                    }
                    (Expect::NotReady, Poll::Ready(Err(error))) => {
                        assert!(error.is::<NotReady>(), "{error}");
                        self.responses.remove(index);
                    }
                    (Expect::Overloaded(cause), Poll::Ready(Err(error))) => {
                        assert_eq!(overload_cause(&error), Some(cause), "{error}");
                        self.responses.remove(index);
                    }
                    (expect, outcome) => panic!("expected {expect:?}, got {outcome:?}"),
                }
            }
            Op::DropResponse(index) => {
                if self.responses.is_empty() {
                    return;
                }
                let response = self.responses.remove(index.index(self.responses.len()));
                let holding = matches!(response.expect, Expect::Holding { .. });
                drop(response);
                if holding {
                    self.release();
                }
            }
            Op::DropService(index) => {
                if self.services.is_empty() {
                    return;
                }
                self.drop_service(index.index(self.services.len()));
            }
            Op::Advance(ms) => {
                self.clock.advance(Duration::from_millis(*ms));
                self.model.now += ms;
            }
            Op::SetLimit(limit) => {
                self.admission.semaphore().set_limit(*limit);
                let model = &mut self.model;
                if *limit >= model.limit {
                    let added = *limit - model.limit;
                    model.limit = *limit;
                    let paid = added.min(model.debt);
                    model.debt -= paid;
                    let mut left = added - paid;
                    while left > 0 {
                        let Some(uid) = self.model.queue.pop_front() else {
                            break;
                        };
                        self.grant(uid);
                        left -= 1;
                    }
                    self.model.available += left;
                } else {
                    let removed = model.limit - *limit;
                    model.limit = *limit;
                    let taken = removed.min(model.available);
                    model.available -= taken;
                    model.debt += removed - taken;
                }
            }
        }
    }

    fn drop_service(&mut self, index: usize) {
        let slot = self.services.remove(index);
        let (uid, state) = (slot.uid, slot.state);
        drop(slot);
        match state {
            State::Reserved | State::Waiting { granted: true, .. } => self.release(),
            State::Waiting { granted: false, .. } => self.leave_queue(uid),
            State::Idle | State::Refused(_) => {}
        }
    }

    /// The real state agrees with the model, and the limit holds.
    fn check(&mut self) {
        let model = &self.model;
        let stats = self.admission.stats();
        let holding = self
            .responses
            .iter()
            .filter(|response| matches!(response.expect, Expect::Holding { .. }))
            .count();
        let reserved = self
            .services
            .iter()
            .filter(|slot| {
                matches!(
                    slot.state,
                    State::Reserved | State::Waiting { granted: true, .. }
                )
            })
            .count();
        // The model is consistent with itself...
        assert_eq!(model.in_use(), holding + reserved, "model: {model:?}");
        // ...and with the real thing.
        assert_eq!(
            stats.in_flight,
            model.in_use(),
            "in flight; model: {model:?}"
        );
        assert_eq!(stats.queued, model.queue.len(), "queued");
        assert_eq!(self.admission.semaphore().waiters(), model.queue.len());
        assert_eq!(
            self.admission.semaphore().available_permits(),
            model.available,
            "available"
        );
        assert_eq!(stats.limit, model.limit);
        assert_eq!(stats.admitted, model.admitted, "admitted");
        assert_eq!(stats.shed, model.shed, "shed");
        assert_eq!(stats.queue_timeouts, model.queue_timeouts, "queue timeouts");
        assert_eq!(stats.expired, 0);
        // In-flight work never grows beyond the limit (it may only stay above
        // it for a while after the limit was lowered).
        assert!(
            stats.in_flight <= model.limit.max(self.in_use_before),
            "{} in flight, limit {}",
            stats.in_flight,
            model.limit
        );
        self.in_use_before = stats.in_flight;
        // The origin runs exactly the responses that hold permits and are not done.
        let running = self
            .responses
            .iter()
            .filter(|response| matches!(response.expect, Expect::Holding { .. }))
            .count();
        assert_eq!(self.origin.running(), running);
        // One timer per queued request whose timeout is still ahead.
        let armed = self
            .services
            .iter()
            .filter(|slot| {
                matches!(slot.state, State::Waiting { deadline: Some(at), .. } if at > model.now)
            })
            .count();
        assert_eq!(self.clock.armed_timers(), armed, "armed timers");
        // A waiting service is woken exactly when it has something to learn.
        for slot in &self.services {
            if let State::Waiting { deadline, granted } = slot.state {
                let due = granted || deadline.is_some_and(|at| at <= model.now);
                let woken = slot.waker.count() > slot.seen;
                assert_eq!(
                    woken, due,
                    "service {} {:?} at {}",
                    slot.uid, slot.state, model.now
                );
            }
        }
    }

    /// Drops everything: every permit must be back.
    fn finish(mut self) {
        while let Some(response) = self.responses.pop() {
            let holding = matches!(response.expect, Expect::Holding { .. });
            drop(response);
            if holding {
                self.release();
            }
            self.check();
        }
        while !self.services.is_empty() {
            self.drop_service(0);
            self.check();
        }
        let stats = self.admission.stats();
        assert_eq!(stats.in_flight, 0);
        assert_eq!(stats.queued, 0);
        assert_eq!(
            self.admission.semaphore().available_permits(),
            self.model.limit
        );
        assert_eq!(self.clock.armed_timers(), 0);
        assert_eq!(self.origin.running(), 0);
    }
}

fn overload_cause(error: &BoxError) -> Option<OverloadCause> {
    error.downcast_ref::<Overloaded>().map(Overloaded::cause)
}

fn run(limit: usize, policy: Policy, ops: &[Op]) {
    let mut harness = Harness::new(limit, policy);
    harness.check();
    for op in ops {
        harness.apply(op);
        harness.check();
    }
    harness.finish();
}

const OPS: std::ops::Range<usize> = 1..60;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3_000))]

    #[test]
    fn wait_policy(limit in 1usize..=4, ops in prop::collection::vec(op_strategy(false), OPS)) {
        run(limit, Policy::Wait, &ops);
    }

    #[test]
    fn shed_policy(limit in 1usize..=4, ops in prop::collection::vec(op_strategy(false), OPS)) {
        run(limit, Policy::Shed, &ops);
    }

    #[test]
    fn queue_policy(
        limit in 1usize..=4,
        policy in queue_policy_strategy(),
        ops in prop::collection::vec(op_strategy(false), OPS),
    ) {
        run(limit, policy, &ops);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_500))]

    #[test]
    fn any_policy_with_resizing(
        // A zero limit is refused at construction; `SetLimit(0)` still reaches it.
        limit in 1usize..=4,
        policy in policy_strategy(),
        ops in prop::collection::vec(op_strategy(true), OPS),
    ) {
        run(limit, policy, &ops);
    }
}
