//! The admission gate of one fan-out request: no call fetches until every
//! required call is admitted, so a request is admitted all-or-nothing.
//! (Futures and wakers only, no I/O: the gateway's fan-out uses it.)
//!
//! A required call that is refused decides the request (503/504) and every
//! other call is dropped with its permit, before any of them reached its
//! origin: a request that will be refused never costs an origin a call.
//! Optional calls wait at the gate too once admitted; one still waiting for
//! its own admission when the gate opens goes on by itself.
//!
//! A call never waits for required calls to its *own* origin: it holds a
//! permit of that origin, which such a sibling may be queued for (a route
//! that calls one origin twice, with a limit of 1, would otherwise wait for
//! itself until its queue timeout).
//!
//! ```
//! use edgeshed_worker::gate::AdmissionGate;
//! use futures_util::FutureExt;
//!
//! // required calls to origins 0 and 1
//! let gate = AdmissionGate::new([0, 1]);
//! let mut first = Box::pin(gate.admitted(0, true));
//! assert!(first.as_mut().now_or_never().is_none(), "origin 1's call is not admitted yet");
//! assert!(gate.admitted(1, true).now_or_never().is_some(), "the last one opens the gate");
//! assert!(first.now_or_never().is_some());
//! ```

use core::cell::RefCell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

/// Counts the required calls of one request not admitted yet, per origin,
/// and who waits for them.
#[derive(Debug, Default)]
pub struct AdmissionGate {
    /// (origin index, required calls to it not admitted yet).
    pending: RefCell<Vec<(usize, usize)>>,
    wakers: RefCell<Vec<Waker>>,
}

impl AdmissionGate {
    /// A gate for required calls to `required` (an origin index per
    /// required call, in any order).
    pub fn new(required: impl IntoIterator<Item = usize>) -> Self {
        let mut pending: Vec<(usize, usize)> = Vec::new();
        for origin in required {
            match pending.iter_mut().find(|(known, _)| *known == origin) {
                Some((_, count)) => *count += 1,
                None => pending.push((origin, 1)),
            }
        }
        Self {
            pending: RefCell::new(pending),
            wakers: RefCell::new(Vec::new()),
        }
    }

    /// Whether every required call is admitted, apart from those to
    /// `origin` (`None`: all of them).
    pub fn is_open_for(&self, origin: Option<usize>) -> bool {
        self.pending
            .borrow()
            .iter()
            .all(|&(known, count)| count == 0 || Some(known) == origin)
    }

    /// Awaited by a call to `origin` once it is admitted: counts it (if
    /// `required`, on the first poll, once) and is ready when every required
    /// call to the other origins is admitted.
    pub fn admitted(&self, origin: usize, required: bool) -> Arrival<'_> {
        Arrival {
            gate: self,
            origin,
            uncounted: required,
        }
    }

    fn arrive(&self, origin: usize) {
        if let Some((_, count)) = self
            .pending
            .borrow_mut()
            .iter_mut()
            .find(|(known, _)| *known == origin)
        {
            *count = count.saturating_sub(1);
        }
        let wakers = core::mem::take(&mut *self.wakers.borrow_mut());
        for waker in wakers {
            waker.wake();
        }
    }
}

/// One admitted call at the gate (see [`AdmissionGate::admitted`]).
#[derive(Debug)]
pub struct Arrival<'a> {
    gate: &'a AdmissionGate,
    origin: usize,
    /// A required call not counted yet.
    uncounted: bool,
}

impl Future for Arrival<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if core::mem::replace(&mut self.uncounted, false) {
            self.gate.arrive(self.origin);
        }
        if self.gate.is_open_for(Some(self.origin)) {
            return Poll::Ready(());
        }
        let mut wakers = self.gate.wakers.borrow_mut();
        if !wakers.iter().any(|known| known.will_wake(cx.waker())) {
            wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}
