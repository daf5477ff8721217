//! The admission of one fan-out request: every permit its calls take, in
//! one global order, all-or-nothing before any of them fetches. (Futures
//! and wakers only, no I/O: the gateway's fan-out uses it with its origins'
//! limits and fleet budgets; the native tests use the core's `Admission`s
//! on a manual clock.)
//!
//! # The order
//!
//! Every permit has a rank: the request's global permit first (taken
//! before any call and held for the request's life), then, for each origin
//! in the configuration's order (`origins`), its local limit, then its
//! fleet budget. Every isolate that runs the configuration ranks alike.
//! A call takes its origin's permits, local then budget, in one [`Acquire`]
//! (the first poll of which is its synchronous first step:
//! `Admit::enter` of the core, and the holder's lease). Then:
//!
//! 1. The calls are taken one at a time, sorted by origin (and by their
//!    position in the route for one origin named twice).
//! 2. A required call that must wait is the **head** of the line: no call
//!    behind it is entered until it is admitted. If it is refused, the
//!    request is refused and nothing more is taken.
//! 3. An optional call that must wait waits **out of line**: the head moves
//!    past it, and nobody waits for it (the gate counts required calls only).
//! 4. An admitted call waits at the **gate** until every required call is
//!    admitted — unless the head waits for the call's own origin (a route
//!    that names one origin twice): then it goes on, since its sibling may
//!    be waiting for its very permit.
//!
//! An uncontended request pays nothing for it: the first poll takes every
//! permit in order, each at once, and opens the gate (no waker is stored,
//! nothing is woken). Only from the first call that would queue does the
//! rest wait, in order.
//!
//! # Why two requests never hold each other's permits
//!
//! A blocked call waits either for a permit of some rank (queued at a
//! limit or for a budget) or, at the gate, for its request's head. Every
//! blocked call that holds a permit of rank `p` waits for a rank above `p`:
//! - queued for its budget permit, it holds its local permit of the same
//!   origin, ranked just below; queued for its local permit it holds none
//!   of its own;
//! - at the gate, it holds its origin's permits, and the head waits at a
//!   later origin: in-line calls before the head are admitted, an
//!   out-of-line call left the line when the head reached it and the head
//!   only moves forward, and a head at the call's own origin lets it go
//!   (rule 4). The head holds nothing of its own yet, or only its own
//!   origin's local permit;
//! - the global permit ranks below everything, and is waited for holding
//!   nothing.
//!
//! Follow who waits for whom: from a waiter to the holders of the permit it
//! waits for, and on from each blocked holder. The rank waited for rises
//! at every step, so the chain cannot close into a cycle: it ends at a
//! holder that is not blocked — a call fetching (bounded by its time
//! limits), which then frees its permits. This holds whatever order a queue
//! serves its waiters in (criticality, codel's newest first, fair-share
//! picks, the budget's waiters, other isolates): reordering only chooses
//! who goes next, it can no longer close a cycle. An optional call waiting
//! out of line holds nobody back: its siblings' gate does not wait for it.
//!
//! # What it does not do
//!
//! - A request's waits are sequential, so its admission can take the sum
//!   of its origins' queue timeouts (and budget waits), never more than its
//!   deadline; concurrent waits took the longest of them, but a request
//!   that waits for one origin no longer holds (or queues for) the others.
//! - A call excused by rule 4 fetches before the calls behind the head are
//!   admitted: a route that names one origin twice can send its first call
//!   and still be refused for a later origin.
//! - Isolates running different configurations (a deployment that reorders
//!   `origins`) rank differently: their budget permits can form a cycle
//!   again, which the queue timeouts and the budget's patience end.
//! - Freedom from deadlock is not freedom from overload: a request still
//!   waits up to its queue timeout behind calls that keep an origin busy.
//!
//! # Use
//!
//! All turns of one admission are polled by one task (they share its
//! waker, as `select_all` polls its futures); a turn resolves once its call
//! is admitted and the gate is open for it, or at once with its refusal.
//!
//! ```
//! use edgeshed::admission::{Admission, Policy};
//! use edgeshed::time::ManualClock;
//! use edgeshed_worker::fanout_admission::{FanOutAdmission, Planned};
//! use futures_util::FutureExt;
//! use std::time::Duration;
//!
//! let clock = ManualClock::new();
//! let policy = Policy::queue(4, Duration::from_millis(100));
//! let a = Admission::new(1, policy, clock.clone()).unwrap();
//! let b = Admission::new(1, policy, clock.clone()).unwrap();
//! let held = b.try_admit().unwrap(); // someone else holds b
//! // a route listing b, then a (both required)
//! let admission = FanOutAdmission::new([
//!     Planned { position: 0, origin: 1, required: true, acquire: b.admit() },
//!     Planned { position: 1, origin: 0, required: true, acquire: a.admit() },
//! ]);
//! let mut to_b = Box::pin(admission.turn(0).unwrap());
//! let mut to_a = Box::pin(admission.turn(1).unwrap());
//! assert!(to_b.as_mut().now_or_never().is_none(), "b is queued");
//! assert!(to_a.as_mut().now_or_never().is_none(), "a is admitted, but waits at the gate");
//! assert_eq!((a.stats().in_flight, b.stats().queued), (1, 1));
//! drop(held);
//! assert!(to_b.now_or_never().unwrap().is_ok());
//! assert!(to_a.now_or_never().unwrap().is_ok(), "the gate opened");
//! ```

mod line;

use core::cell::RefCell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use line::{Entry, Line, Step};

/// How one call takes its origin's permits (local, then budget): a future
/// of its permits or its refusal, whose first poll decides without waiting
/// when it can. Every such `Unpin` future is one.
pub trait Acquire: Future<Output = Result<Self::Permit, Self::Refused>> + Unpin {
    /// What an admitted call holds (dropping it frees its permits).
    type Permit;
    /// Why a call was refused.
    type Refused;
}

impl<F, P, E> Acquire for F
where
    F: Future<Output = Result<P, E>> + Unpin,
{
    type Permit = P;
    type Refused = E;
}

/// One call of a fan-out request, as [`FanOutAdmission::new`] takes it.
#[derive(Debug)]
pub struct Planned<A> {
    /// Its index in the route's list of calls (see [`FanOutAdmission::turn`]).
    pub position: usize,
    /// Its origin's index in the configuration: its rank in the order.
    pub origin: usize,
    /// Whether the request fails without it.
    pub required: bool,
    /// How it takes its permits.
    pub acquire: A,
}

/// The admission of one fan-out request (see the module docs).
pub struct FanOutAdmission<A: Acquire> {
    line: RefCell<Line<A>>,
}

impl<A: Acquire> FanOutAdmission<A> {
    /// The admission of `calls` (in any order; nothing is taken until a
    /// turn is polled).
    pub fn new(calls: impl IntoIterator<Item = Planned<A>>) -> Self {
        let entries = calls
            .into_iter()
            .map(|call| Entry {
                position: call.position,
                origin: call.origin,
                required: call.required,
                admitted: false,
                step: Step::Pending(call.acquire),
            })
            .collect();
        Self {
            line: RefCell::new(Line::new(entries)),
        }
    }

    /// The turn of the call at `position` (`None` if there is no such
    /// call): ready with its permits once it is admitted and the gate is
    /// open for it, or with its refusal. Dropping it gives the call up,
    /// with whatever it holds or its place in a queue.
    pub fn turn(&self, position: usize) -> Option<Turn<'_, A>> {
        let line = self.line.try_borrow().ok()?;
        let index = line
            .entries
            .iter()
            .position(|entry| entry.position == position)?;
        Some(Turn {
            admission: self,
            index,
        })
    }
}

/// One call's turn (see [`FanOutAdmission::turn`]). Polled again after it
/// resolved, it stays pending.
#[must_use = "futures do nothing unless polled"]
pub struct Turn<'a, A: Acquire> {
    admission: &'a FanOutAdmission<A>,
    /// Its entry in the line.
    index: usize,
}

impl<A: Acquire> Future for Turn<'_, A> {
    type Output = Result<A::Permit, A::Refused>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Ok(mut line) = self.admission.line.try_borrow_mut() else {
            // polled from within an `Acquire` of the same request: misuse
            return Poll::Pending;
        };
        let changed = line.advance(cx);
        let open = line.gate_open(self.index);
        let ready = match line.entries.get_mut(self.index) {
            Some(entry) => match &entry.step {
                Step::Decided(Err(_)) => true,
                Step::Decided(Ok(_)) => open,
                Step::Pending(_) | Step::Gone => false,
            },
            None => false,
        };
        let outcome = if ready {
            line.entries.get_mut(self.index).and_then(|entry| {
                match core::mem::replace(&mut entry.step, Step::Gone) {
                    Step::Decided(outcome) => Some(outcome),
                    _ => None,
                }
            })
        } else {
            None
        };
        // Turns that waited before this change look again (in one task,
        // this costs the contended path one more poll; nothing is stored
        // or woken on the uncontended one).
        let wakers = if changed {
            line.take_wakers()
        } else {
            Vec::new()
        };
        if outcome.is_none() {
            line.register(cx.waker());
        }
        drop(line);
        for waker in wakers {
            waker.wake();
        }
        match outcome {
            Some(outcome) => Poll::Ready(outcome),
            None => Poll::Pending,
        }
    }
}

impl<A: Acquire> Drop for Turn<'_, A> {
    fn drop(&mut self) {
        let Ok(mut line) = self.admission.line.try_borrow_mut() else {
            return;
        };
        // Nothing to do for a turn that resolved (its call took the outcome).
        let held = line.give_up(self.index);
        let wakers = match held {
            Some(_) => line.take_wakers(),
            None => Vec::new(),
        };
        drop(line);
        // Dropped (its place left, its permits freed) outside the borrow.
        drop(held);
        for waker in wakers {
            waker.wake();
        }
    }
}
