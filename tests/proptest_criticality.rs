#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! Random interleavings of calls of every criticality and key against a
//! reference model (`proptest_criticality/model.rs`): arrivals, polls,
//! releases, abandoned waits, time, limit and reserve changes, under every
//! policy, with and without reserves, FIFO and codel. After every step the
//! real admission must agree with the model — each outcome, the stats (also
//! per criticality), free permits, active keys and wake-ups — and:
//! - the limit is never exceeded (in flight grows only while under it);
//! - no call of a higher criticality is refused for capacity while calls of
//!   a lower one hold more than their ceiling;
//! - no key at or over its fair share is admitted while a waiter of another
//!   key of the same criticality is under its share;
//! - no waiter could take a free permit (what the lock-free paths rely on).
//!
//! The existing `proptest_interleavings.rs` covers the service protocol
//! (readiness, calls, clones); this one the per-call admission features.

#[path = "proptest_criticality/model.rs"]
mod model;
#[path = "proptest_criticality/ops.rs"]
mod ops;
mod support;

use edgeshed::admission::{Admission, Admit, AdmitError, Call, Options, QueueDiscipline, Reserve};
use edgeshed::error::RateLimitReason;
use edgeshed::semaphore::Permit;
use edgeshed::time::ManualClock;
use model::{index, Model, Outcome, Policy, Standing, RANKS};
use ops::{op_strategy, policy_strategy, Op};
use proptest::prelude::*;
use std::task::Poll;
use std::time::Duration;
use support::CountingWaker;

struct Waiting {
    id: u64,
    admit: Admit<ManualClock>,
    waker: CountingWaker,
    seen: usize,
}

struct Harness {
    clock: ManualClock,
    admission: Admission<ManualClock>,
    model: Model,
    waiting: Vec<Waiting>,
    held: Vec<(u64, Permit)>,
    next_id: u64,
    in_use_before: usize,
}

impl Harness {
    fn new(limit: usize, policy: Policy, reserve: bool) -> Self {
        let clock = ManualClock::new();
        let ms = Duration::from_millis;
        let (real_policy, discipline) = match policy {
            Policy::Shed => (edgeshed::Policy::Shed, QueueDiscipline::Fifo),
            Policy::Wait => (edgeshed::Policy::Wait, QueueDiscipline::Fifo),
            Policy::Queue {
                max_queue,
                timeout,
                codel_target,
            } => (
                edgeshed::Policy::queue(max_queue, ms(timeout)),
                codel_target.map_or(QueueDiscipline::Fifo, |t| QueueDiscipline::Codel {
                    target: ms(t),
                }),
            ),
        };
        let reserve_option = if reserve {
            Reserve::default()
        } else {
            Reserve::NONE
        };
        let options = Options::new()
            .reserve(reserve_option)
            .discipline(discipline);
        let admission =
            Admission::with_options(limit, real_policy, options, clock.clone()).unwrap();
        Self {
            clock,
            admission,
            model: Model::new(limit, policy, reserve),
            waiting: Vec::new(),
            held: Vec::new(),
            next_id: 0,
            in_use_before: 0,
        }
    }

    fn outcome(outcome: Poll<Result<Permit, AdmitError>>) -> (Outcome, Option<Permit>) {
        match outcome {
            Poll::Pending => (Outcome::Pending, None),
            Poll::Ready(Ok(permit)) => (Outcome::Admitted, Some(permit)),
            Poll::Ready(Err(AdmitError::Overloaded(o))) => (Outcome::Overloaded(o.cause()), None),
            Poll::Ready(Err(AdmitError::RateLimited(l)))
                if l.reason() == RateLimitReason::FairShare =>
            {
                (Outcome::FairShare, None)
            }
            Poll::Ready(Err(other)) => panic!("unexpected refusal {other:?}"),
        }
    }

    fn apply(&mut self, op: &Op) {
        match *op {
            Op::Arrive(rank, key) => {
                self.next_id += 1;
                let id = self.next_id;
                let expected = self.model.arrive(id, rank, key);
                let call =
                    Call::new(rank).with_optional_key(key.map(|k| format!("key-{k}").into()));
                let mut admit = self.admission.admit_call(call);
                let waker = CountingWaker::new();
                let (outcome, permit) = Self::outcome(waker.poll(&mut admit));
                assert_eq!(outcome, expected, "arrival of {rank:?} {key:?}");
                if let Some(permit) = permit {
                    assert_eq!(permit.criticality(), rank);
                    self.held.push((id, permit));
                } else if outcome == Outcome::Pending {
                    let seen = waker.count();
                    self.waiting.push(Waiting {
                        id,
                        admit,
                        waker,
                        seen,
                    });
                }
            }
            Op::Poll(at) if !self.waiting.is_empty() => {
                let at = at.index(self.waiting.len());
                let id = self.waiting[at].id;
                let expected = self.model.poll(id);
                let call = &mut self.waiting[at];
                let (outcome, permit) = Self::outcome(call.waker.poll(&mut call.admit));
                assert_eq!(outcome, expected, "poll of call {id}");
                call.seen = call.waker.count();
                if outcome != Outcome::Pending {
                    self.waiting.remove(at);
                }
                if let Some(permit) = permit {
                    self.held.push((id, permit));
                }
            }
            Op::Release(at) if !self.held.is_empty() => {
                let (id, permit) = self.held.remove(at.index(self.held.len()));
                self.model.release(id);
                drop(permit);
            }
            Op::Abandon(at) if !self.waiting.is_empty() => {
                let call = self.waiting.remove(at.index(self.waiting.len()));
                self.model.abandon(call.id);
                drop(call);
            }
            Op::Advance(ms) => {
                self.model.advance(ms);
                self.clock.advance(Duration::from_millis(ms));
            }
            Op::SetLimit(limit) => {
                self.model.set_limit(limit);
                self.admission.semaphore().set_limit(limit);
            }
            Op::SetReserve(on) => {
                self.model.set_reserve(on);
                self.admission.set_reserve(if on {
                    Reserve::default()
                } else {
                    Reserve::NONE
                });
            }
            _ => {}
        }
    }

    fn check(&mut self) {
        let model = &self.model;
        // The limit holds, counted on the permits themselves (those held here
        // and those handed to a waiter not polled yet): it only grows while
        // under the limit.
        let granted = model
            .waiters
            .iter()
            .filter(|w| w.standing == Standing::Granted)
            .count();
        let holding = self.held.len() + granted;
        assert!(
            holding <= model.limit.max(self.in_use_before),
            "{holding} permits held, limit {}",
            model.limit
        );
        self.in_use_before = holding;
        model.check_invariant();
        let stats = self.admission.stats();
        assert_eq!(stats.in_flight, model.in_use(), "in flight; {model:?}");
        assert_eq!(stats.queued, model.waiting().count(), "queued");
        assert_eq!(stats.limit, model.limit);
        assert_eq!(
            self.admission.semaphore().available_permits(),
            model.available,
            "free permits"
        );
        assert_eq!(
            self.admission.semaphore().active_keys(),
            model.active_keyed_keys(),
            "active keys"
        );
        assert_eq!(stats.fair_share_refused, model.counts.fair_share);
        for rank in RANKS {
            let real = stats.by_criticality.get(rank);
            let i = index(rank);
            let queued = model.waiting().filter(|w| w.rank == rank).count();
            assert_eq!(
                (real.in_flight, real.queued),
                (model.held_by(rank), queued),
                "{rank:?} now"
            );
            assert_eq!(
                (
                    real.admitted,
                    real.shed,
                    real.queue_timeouts,
                    real.displaced
                ),
                (
                    model.counts.admitted[i],
                    model.counts.shed[i],
                    model.counts.queue_timeouts[i],
                    model.counts.displaced[i]
                ),
                "{rank:?} counters"
            );
        }
        // A waiter is woken exactly when it has something to learn.
        for call in &self.waiting {
            let waiter = model.waiters.iter().find(|w| w.id == call.id).unwrap();
            let due = match waiter.standing {
                Standing::Granted | Standing::Displaced | Standing::Unfair | Standing::Stale => {
                    true
                }
                Standing::Waiting => waiter.deadline.is_some_and(|at| at <= model.now),
            };
            assert_eq!(
                call.waker.count() > call.seen,
                due,
                "wake-up of call {} ({:?})",
                call.id,
                waiter.standing
            );
        }
    }

    /// Drops everything: every permit and every key must be gone.
    fn finish(mut self) {
        while let Some(call) = self.waiting.pop() {
            self.model.abandon(call.id);
            drop(call);
            self.check();
        }
        while let Some((id, permit)) = self.held.pop() {
            self.model.release(id);
            drop(permit);
            self.check();
        }
        let stats = self.admission.stats();
        assert_eq!((stats.in_flight, stats.queued), (0, 0));
        assert_eq!(self.admission.semaphore().active_keys(), 0);
        assert_eq!(
            self.admission.semaphore().available_permits(),
            self.model.limit
        );
        assert_eq!(self.clock.armed_timers(), 0);
    }
}

fn run(limit: usize, policy: Policy, reserve: bool, ops: &[Op]) {
    let mut harness = Harness::new(limit, policy, reserve);
    harness.check();
    for op in ops {
        harness.apply(op);
        harness.check();
    }
    harness.finish();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3_000))]

    #[test]
    fn criticality_reserves_displacement_codel_and_fair_share_agree_with_the_model(
        limit in 1usize..=6,
        policy in policy_strategy(),
        reserve in any::<bool>(),
        ops in prop::collection::vec(op_strategy(), 1..80),
    ) {
        run(limit, policy, reserve, &ops);
    }
}
