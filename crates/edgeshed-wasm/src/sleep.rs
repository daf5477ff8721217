//! [`JsSleep`]: a `setTimeout` as a future.

use crate::clock::now_millis;
use crate::id_map::id_to_js;
use crate::timers::{arm_shared, clear_timeout, set_timeout, Due, Timer, Timers, FIRE_JS, TIMERS};
use core::cmp::Reverse;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use wasm_bindgen::JsValue;

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
    /// When it ends, in ms on the clock of `now_millis`.
    deadline_ms: f64,
    timer: Option<Armed>,
}

/// A sleep's registration, once polled.
struct Armed {
    id: u64,
    /// Its own host timer, or `None` when it waits in the shared queue.
    handle: Option<JsValue>,
}

impl JsSleep {
    /// A sleep until `deadline_ms` on the clock of `now_millis`, armed on
    /// its first poll.
    pub(crate) fn at(deadline_ms: f64) -> Self {
        Self {
            deadline_ms,
            timer: None,
        }
    }
}

impl JsSleep {
    /// Registers this sleep with a timer of its own (workerd) or in the
    /// shared queue; `Ready` at once if the host refused a timer.
    fn arm(&mut self, cx: &Context<'_>) -> Poll<()> {
        // (The worker build serves workerd only: no shared queue compiled in.)
        let shared = !crate::task::per_request_host();
        let registered = TIMERS.with(|timers| {
            let mut timers = timers.borrow_mut();
            if !shared {
                return Some(timers.armed.insert(Timer::new(cx)));
            }
            let due = Due::at(self.deadline_ms);
            let earliest = timers.shared.as_ref().is_none_or(|(at, _)| due < *at);
            if earliest && !arm_shared(&mut timers, due) {
                return None;
            }
            let id = timers.armed.insert(Timer::new(cx));
            timers.queue.push(Reverse((due, id)));
            timers.queued += 1;
            Some(id)
        });
        let Some(id) = registered else {
            return self.refused();
        };
        if shared {
            self.timer = Some(Armed { id, handle: None });
            return Poll::Pending;
        }
        // setTimeout's delay is a signed 32-bit millisecond count.
        let delay = (self.deadline_ms - now_millis())
            .ceil()
            .clamp(0.0, 2_147_483_647.0);
        match FIRE_JS.with(|fire| set_timeout(fire, delay, id_to_js(id))) {
            Ok(handle) => {
                self.timer = Some(Armed {
                    id,
                    handle: Some(handle),
                });
                Poll::Pending
            }
            Err(_) => {
                TIMERS.with(|timers| timers.borrow_mut().armed.remove(id));
                self.refused()
            }
        }
    }

    /// The host refused a timer (a request being torn down): an exception
    /// must not unwind through the executor's poll, so the sleep simply
    /// ends now — better early than never.
    fn refused(&mut self) -> Poll<()> {
        self.timer = None;
        self.deadline_ms = 0.0;
        Poll::Ready(())
    }
}

impl Future for JsSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(armed) = &self.timer else {
            return self.arm(cx);
        };
        let id = armed.id;
        TIMERS.with(|timers| {
            let mut timers = timers.borrow_mut();
            let Some(timer) = timers.armed.get_mut(id) else {
                return Poll::Ready(());
            };
            if timer.fired {
                return Poll::Ready(());
            }
            match &timer.waker {
                Some(waker) if waker.will_wake(cx.waker()) => {}
                _ => timer.waker = Some(cx.waker().clone()),
            }
            Poll::Pending
        })
    }
}

impl Drop for JsSleep {
    fn drop(&mut self) {
        let Some(armed) = self.timer.take() else {
            return;
        };
        let (was_armed, idle_shared, removed) = TIMERS.with(|timers| {
            let mut timers = timers.borrow_mut();
            let removed = timers.armed.remove(armed.id);
            let was_armed = removed.as_ref().is_some_and(|timer| !timer.fired);
            let mut idle_shared = None;
            if armed.handle.is_none() && was_armed {
                timers.queued = timers.queued.saturating_sub(1);
                if timers.queued == 0 {
                    // The last queued sleep gone: do not keep the host (a
                    // Node process) waiting on a timer nobody needs.
                    timers.queue.clear();
                    idle_shared = timers.shared.take().map(|(_, handle)| handle);
                } else if timers.queue.len() > 2 * timers.queued + 64 {
                    // Mostly sleeps dropped early: keep memory bounded.
                    let Timers { queue, armed, .. } = &mut *timers;
                    queue.retain(|Reverse((_, id))| armed.get(*id).is_some_and(|t| !t.fired));
                }
            }
            (was_armed, idle_shared, removed)
        });
        // The removed timer's waker is dropped here, outside the borrow.
        drop(removed);
        if let Some(handle) = idle_shared {
            let _ = clear_timeout(&handle);
        }
        if let (true, Some(handle)) = (was_armed, armed.handle) {
            let _ = clear_timeout(&handle);
        }
    }
}
