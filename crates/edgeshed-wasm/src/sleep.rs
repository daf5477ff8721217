//! [`JsSleep`]: a `setTimeout` as a future, and the one [`Timers`] of the
//! JavaScript host with its callbacks.

use crate::host::JsPlatform;
use crate::id_map::id_from_js;
use crate::timers::Timers;
use core::cell::RefCell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use wasm_bindgen::prelude::*;

thread_local! {
    static TIMERS: RefCell<Timers<JsPlatform>> = RefCell::new(Timers::new(JsPlatform {
        fire: FIRE.with(|fire| crate::task::guard(fire.as_ref(), "timer")),
        fire_queue: FIRE_QUEUE.with(|fire| crate::task::guard(fire.as_ref(), "timer queue")),
    }));
    /// A sleep's own host timer fired (workerd): called with its id.
    static FIRE: Closure<dyn FnMut(JsValue)> = Closure::new(|id: JsValue| {
        let Some(id) = id.as_f64().and_then(id_from_js) else { return };
        let waker = TIMERS.with(|timers| timers.borrow_mut().fire(id));
        // Woken outside the borrow: the wake may poll and drop sleeps. A
        // timer fires in the request that armed it: a local wake.
        if let Some(waker) = waker {
            crate::task::wake_from_own_event(waker);
        }
    });
    /// The shared host timer fired: every sleep that is due ends.
    static FIRE_QUEUE: Closure<dyn FnMut(JsValue)> = Closure::new(|_: JsValue| {
        let due: Vec<Waker> = TIMERS.with(|timers| timers.borrow_mut().fire_queue());
        // An executor task's waker puts it in the run queue (outside workerd
        // there is no request to step in), so an exception through one step
        // cannot strand the rest.
        for waker in due {
            waker.wake();
        }
    });
}

/// A `setTimeout` as a future. The timer is set on the first poll and
/// cleared if the future is dropped first.
///
/// Timers share one long-lived callback that receives the timer's id, so a
/// timer that fires late (or that the host could not clear) finds nothing to
/// do instead of calling freed memory.
///
/// In workerd each sleep gets a host timer of its own: a timer belongs to
/// the request that set it, keeps that request alive and steps its task in
/// its turn. Elsewhere (Node.js, browsers) all sleeps share one host timer,
/// armed for the earliest deadline: a thousand queued calls cost one
/// `setTimeout`, not a thousand.
#[must_use = "futures do nothing unless polled"]
pub struct JsSleep {
    /// When it ends, in ms on the host's monotonic clock.
    deadline_ms: f64,
    /// Its id in the timers, once polled.
    id: Option<u64>,
}

impl JsSleep {
    /// A sleep until `deadline_ms` on the host's monotonic clock, armed on
    /// its first poll.
    pub(crate) fn at(deadline_ms: f64) -> Self {
        Self {
            deadline_ms,
            id: None,
        }
    }
}

impl Future for JsSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if let Some(id) = self.id {
            return TIMERS.with(|timers| timers.borrow_mut().poll(id, cx.waker()));
        }
        // (The worker build serves workerd only: no shared queue compiled in.)
        let own_timer = crate::task::per_request_host();
        let deadline_ms = self.deadline_ms;
        match TIMERS.with(|timers| timers.borrow_mut().arm(deadline_ms, cx.waker(), own_timer)) {
            Some(id) => {
                self.id = Some(id);
                Poll::Pending
            }
            // The host refused a timer (a request being torn down): an
            // exception must not unwind through the executor's poll, so the
            // sleep simply ends now — better early than never.
            None => {
                self.deadline_ms = 0.0;
                Poll::Ready(())
            }
        }
    }
}

impl Drop for JsSleep {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let waker = TIMERS.with(|timers| timers.borrow_mut().cancel(id));
        // Dropped here, outside the borrow.
        drop(waker);
    }
}
