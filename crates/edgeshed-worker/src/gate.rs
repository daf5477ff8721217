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
//! ```
//! use edgeshed_worker::gate::AdmissionGate;
//! use futures_util::FutureExt;
//!
//! let gate = AdmissionGate::new(2);
//! let mut first = Box::pin(gate.admitted(true));
//! assert!(first.as_mut().now_or_never().is_none(), "one required call is not admitted yet");
//! assert!(gate.admitted(true).now_or_never().is_some(), "the last one opens the gate");
//! assert!(first.now_or_never().is_some());
//! ```

use core::cell::{Cell, RefCell};
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

/// Counts the required calls of one request not admitted yet, and who waits
/// for them.
#[derive(Debug, Default)]
pub struct AdmissionGate {
    pending: Cell<usize>,
    wakers: RefCell<Vec<Waker>>,
}

impl AdmissionGate {
    /// A gate that opens once `required` calls are admitted (at once for 0).
    pub fn new(required: usize) -> Self {
        Self {
            pending: Cell::new(required),
            wakers: RefCell::new(Vec::new()),
        }
    }

    /// Whether every required call has been admitted.
    pub fn is_open(&self) -> bool {
        self.pending.get() == 0
    }

    /// Awaited by a call once it is admitted: counts it (if `required`, on
    /// the first poll, once) and is ready when the gate is open.
    pub fn admitted(&self, required: bool) -> Arrival<'_> {
        Arrival {
            gate: self,
            uncounted: required,
        }
    }

    fn arrive(&self) {
        let left = self.pending.get().saturating_sub(1);
        self.pending.set(left);
        if left == 0 {
            let wakers = core::mem::take(&mut *self.wakers.borrow_mut());
            for waker in wakers {
                waker.wake();
            }
        }
    }
}

/// One admitted call at the gate (see [`AdmissionGate::admitted`]).
#[derive(Debug)]
pub struct Arrival<'a> {
    gate: &'a AdmissionGate,
    /// A required call not counted yet.
    uncounted: bool,
}

impl Future for Arrival<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if core::mem::replace(&mut self.uncounted, false) {
            self.gate.arrive();
        }
        if self.gate.is_open() {
            return Poll::Ready(());
        }
        let mut wakers = self.gate.wakers.borrow_mut();
        if !wakers.iter().any(|known| known.will_wake(cx.waker())) {
            wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}
