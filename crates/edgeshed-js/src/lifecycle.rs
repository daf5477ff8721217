//! `limiter.onIdle()`, `limiter.clearQueue()` and `limiter.close()`: states
//! only the JS face keeps (the core's `Admission` knows none of them).
//!
//! * **Idle**: no call holds a slot (held bodies and abandoned work
//!   included) and none waits, `stats().inFlight` and `stats().queued`
//!   both 0. Every permit of the limiter's calls is a [`Lease`] that tells
//!   the lifecycle when it is back, and every waiter leaving the queue
//!   unadmitted does ([`Lifecycle::check`]): the idle promises resolve at
//!   the very release that leaves the limiter idle, with no timer.
//! * **Clearing**: a call that queues notes how many clears there were
//!   ([`Cleared`]); `clearQueue()` counts one more and wakes every waiter,
//!   which gives up its place and rejects (`reason: "cleared"`).
//! * **Closed**: a flag `run` and `fetch` check before admission. Calls
//!   waiting when it is set keep their place and run (a drain);
//!   `clearQueue()` refuses them.

use crate::host::{idle_promise, resolve_all};
use core::cell::{Cell, RefCell};
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use edgeshed::semaphore::{Permit, Semaphore};
use edgeshed_wasm::held::{Lease, Released};
use std::rc::Rc;

/// The lifecycle of one `Limiter`, shared by its calls.
pub(crate) struct Lifecycle {
    semaphore: Semaphore,
    closed: Cell<bool>,
    /// The `onIdle()` and `close()` promises pending: their resolve
    /// functions (a JavaScript array, glue.js `idlePromise`), and how many.
    idle: js_sys::Array,
    pending: Cell<u32>,
    /// How many times `clearQueue()` was called.
    clears: Cell<u64>,
    /// The wakers of the waiting calls, by slot (a vacant one holds a
    /// no-op waker); `free` lists the vacant slots.
    wakers: RefCell<Vec<Waker>>,
    free: RefCell<Vec<usize>>,
}

impl core::fmt::Debug for Lifecycle {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Lifecycle")
            .field("clears", &self.clears.get())
            .finish_non_exhaustive()
    }
}

impl Lifecycle {
    /// The lifecycle of the calls admitted through `semaphore`.
    pub(crate) fn new(semaphore: Semaphore) -> Rc<Self> {
        Rc::new(Self {
            semaphore,
            closed: Cell::new(false),
            idle: js_sys::Array::new(),
            pending: Cell::new(0),
            clears: Cell::new(0),
            wakers: RefCell::new(Vec::new()),
            free: RefCell::new(Vec::new()),
        })
    }

    /// Whether `close()` was called.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.get()
    }

    /// `close()`: no new call is admitted; a promise resolving once idle.
    pub(crate) fn close(&self) -> js_sys::Promise {
        self.closed.set(true);
        self.when_idle()
    }

    /// Whether no call holds a slot and none waits.
    fn is_idle(&self) -> bool {
        self.semaphore.in_use() == 0 && self.semaphore.waiters() == 0
    }

    /// `onIdle()`: a promise resolving once idle (resolved now if idle now).
    pub(crate) fn when_idle(&self) -> js_sys::Promise {
        let idle = self.is_idle();
        if !idle {
            self.pending.set(self.pending.get().saturating_add(1));
        }
        idle_promise(&self.idle, idle)
    }

    /// Resolves the pending idle promises if the limiter is idle now: after
    /// a permit came back, or a waiter left the queue unadmitted.
    pub(crate) fn check(&self) {
        if self.pending.get() == 0 || !self.is_idle() {
            return;
        }
        self.pending.set(0);
        resolve_all(&self.idle);
    }

    /// `clearQueue()`: every call waiting now is refused (its wait wakes
    /// and sees the clear).
    pub(crate) fn clear_queue(&self) {
        self.clears.set(self.clears.get().wrapping_add(1));
        // Every slot is vacated at once (a waiter of an earlier clear leaves
        // its slot alone, see `Cleared`'s drop).
        self.free.borrow_mut().clear();
        let mut wakers = core::mem::take(&mut *self.wakers.borrow_mut());
        // Woken outside the borrow: a waker may poll its task at once.
        while let Some(waker) = wakers.pop() {
            waker.wake();
        }
    }
}

impl Released for Lifecycle {
    fn released(&self) {
        self.check();
    }
}

/// `permit` as a lease that tells `lifecycle` when it comes back.
pub(crate) fn lease(lifecycle: &Rc<Lifecycle>, permit: Permit) -> Lease {
    let then: Rc<dyn Released> = lifecycle.clone();
    Lease::new(permit, Some(then))
}

/// A waiting call's view of `clearQueue()`: ready once it is called after
/// the call queued.
pub(crate) struct Cleared {
    lifecycle: Rc<Lifecycle>,
    /// `clears` when the call queued.
    seen: u64,
    /// Its slot in `wakers`, once polled.
    slot: Option<usize>,
}

impl Cleared {
    /// For a call queuing now.
    pub(crate) fn new(lifecycle: &Rc<Lifecycle>) -> Self {
        Self {
            lifecycle: Rc::clone(lifecycle),
            seen: lifecycle.clears.get(),
            slot: None,
        }
    }
}

impl Future for Cleared {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let lifecycle = &this.lifecycle;
        if lifecycle.clears.get() != this.seen {
            return Poll::Ready(());
        }
        let waker = cx.waker().clone();
        let mut wakers = lifecycle.wakers.borrow_mut();
        if let Some(entry) = this.slot.and_then(|slot| wakers.get_mut(slot)) {
            *entry = waker;
            return Poll::Pending;
        }
        let vacant = lifecycle.free.borrow_mut().pop();
        let slot = match vacant.and_then(|slot| Some((slot, wakers.get_mut(slot)?))) {
            Some((slot, entry)) => {
                *entry = waker;
                slot
            }
            None => {
                wakers.push(waker);
                wakers.len() - 1
            }
        };
        this.slot = Some(slot);
        Poll::Pending
    }
}

impl Drop for Cleared {
    fn drop(&mut self) {
        // After a clear the slot is no longer this call's.
        if self.lifecycle.clears.get() != self.seen {
            return;
        }
        if let Some(slot) = self.slot {
            if let Some(entry) = self.lifecycle.wakers.borrow_mut().get_mut(slot) {
                *entry = Waker::noop().clone();
            }
            self.lifecycle.free.borrow_mut().push(slot);
        }
    }
}
