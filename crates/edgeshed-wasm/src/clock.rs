//! Time from the JavaScript host: [`JsClock`] (an edgeshed `Clock`) and
//! [`JsSleep`], a `setTimeout` as a future.

use crate::id_map::{id_from_js, id_to_js, Registry};
use core::cell::RefCell;
use core::cmp::Reverse;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use edgeshed::time::{Clock, Instant};
use std::collections::BinaryHeap;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// `setTimeout(callback, ms, id)`: the callback receives the id.
    #[wasm_bindgen(js_name = setTimeout)]
    #[wasm_bindgen(catch)]
    fn set_timeout(
        callback: &js_sys::Function,
        milliseconds: f64,
        id: f64,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = clearTimeout, catch)]
    fn clear_timeout(handle: &JsValue) -> Result<(), JsValue>;
}

#[wasm_bindgen(module = "/src/glue.js")]
extern "C" {
    /// `performance.now()`, or `Date.now()` where the host has no
    /// `performance` (chosen once, when the module loads).
    #[wasm_bindgen(js_name = monotonicNow)]
    fn now_millis() -> f64;
}

/// Time from the JavaScript host: `performance.now()` (or `Date.now()`
/// where there is no `performance`) and `setTimeout` timers.
///
/// In workerd both clocks advance only across I/O, which is exactly what
/// timeouts and deadlines need there.
#[derive(Clone, Copy, Debug, Default)]
pub struct JsClock;

impl edgeshed::time::RealClock for JsClock {}

impl Clock for JsClock {
    type Sleep = JsSleep;

    fn now(&self) -> Instant {
        Instant::from_origin(millis_to_duration(now_millis()))
    }

    fn sleep_until(&self, deadline: Instant) -> JsSleep {
        JsSleep {
            deadline_ms: deadline.since_origin().as_secs_f64() * 1000.0,
            timer: None,
        }
    }
}

/// A host reading in ms as a duration, whatever the host returns: NaN and
/// negative readings count as 0, and a reading too large (or infinite)
/// as the largest duration (`Duration::from_secs_f64` would panic).
fn millis_to_duration(millis: f64) -> Duration {
    if millis.is_nan() || millis <= 0.0 {
        return Duration::ZERO;
    }
    Duration::try_from_secs_f64(millis / 1000.0).unwrap_or(Duration::MAX)
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

/// A deadline in ms as a totally ordered key (non-negative `f64`s order
/// like their bit patterns).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Due(u64);

impl Due {
    fn at(millis: f64) -> Self {
        Self(millis.max(0.0).to_bits())
    }

    fn millis(self) -> f64 {
        f64::from_bits(self.0)
    }
}

/// One sleep's state in the registry.
struct Timer {
    /// The waker the sleep was last polled with: a timer wakes whoever
    /// polls it, never a task found some other way.
    waker: Option<Waker>,
    fired: bool,
}

impl Timer {
    fn new(cx: &Context<'_>) -> Self {
        Self {
            waker: Some(cx.waker().clone()),
            fired: false,
        }
    }

    /// Marks it fired; returns whom to wake, unless it had fired already.
    fn fire(&mut self) -> Option<Waker> {
        if self.fired {
            return None;
        }
        self.fired = true;
        self.waker.take()
    }
}

#[derive(Default)]
struct Timers {
    /// Every sleep that has been polled and not dropped yet.
    armed: Registry<Timer>,
    /// Sleeps served by the shared host timer, earliest first. A sleep
    /// dropped early stays in the heap until it surfaces (or the heap is
    /// compacted): only ids still in `armed` count.
    queue: BinaryHeap<Reverse<(Due, u64)>>,
    /// How many sleeps in `queue` are still armed.
    queued: usize,
    /// The shared host timer, and the deadline it is set for.
    shared: Option<(Due, JsValue)>,
}

thread_local! {
    static TIMERS: RefCell<Timers> = RefCell::new(Timers::default());
    static FIRE: Closure<dyn FnMut(JsValue)> = Closure::new(|id: JsValue| {
        let Some(id) = id.as_f64().and_then(id_from_js) else { return };
        let waker = TIMERS.with(|timers| timers.borrow_mut().armed.get_mut(id)?.fire());
        // Woken outside the borrow: the wake may poll and drop sleeps. A
        // timer fires in the request that armed it: a local wake.
        if let Some(waker) = waker {
            crate::task::wake_from_own_event(waker);
        }
    });
    /// The shared host timer's callback: fires every sleep that is due and
    /// re-arms for the next.
    static FIRE_QUEUE: Closure<dyn FnMut(JsValue)> = Closure::new(|_: JsValue| {
        let now = Due::at(now_millis());
        let due: Vec<Waker> = TIMERS.with(|timers| {
            let mut timers = timers.borrow_mut();
            timers.shared = None;
            let mut due = Vec::new();
            while let Some(&Reverse((at, id))) = timers.queue.peek() {
                let live = timers.armed.contains(id);
                if live && at > now {
                    break;
                }
                timers.queue.pop();
                if let Some(waker) = timers.armed.get_mut(id).and_then(Timer::fire) {
                    timers.queued = timers.queued.saturating_sub(1);
                    due.push(waker);
                }
            }
            if let Some(&Reverse((next, _))) = timers.queue.peek() {
                if !arm_shared(&mut timers, next) {
                    // No timer for the rest: they end now (see `refused`).
                    for Reverse((_, id)) in core::mem::take(&mut timers.queue) {
                        if let Some(waker) = timers.armed.get_mut(id).and_then(Timer::fire) {
                            due.push(waker);
                        }
                    }
                    timers.queued = 0;
                }
            }
            due
        });
        // An executor task's waker puts it in the run queue (outside workerd
        // there is no request to step in), so an exception through one step
        // cannot strand the rest.
        for waker in due {
            waker.wake();
        }
    });
    /// `FIRE`, guarded like the executor's steps.
    static FIRE_JS: js_sys::Function = FIRE.with(|fire| crate::task::guard(fire.as_ref(), "timer"));
    /// `FIRE_QUEUE`, guarded.
    static FIRE_QUEUE_JS: js_sys::Function =
        FIRE_QUEUE.with(|fire| crate::task::guard(fire.as_ref(), "timer queue"));
}

/// Sets the shared host timer for `due`, replacing an earlier setting;
/// `false` if the host refused a timer.
fn arm_shared(timers: &mut Timers, due: Due) -> bool {
    if let Some((_, handle)) = timers.shared.take() {
        let _ = clear_timeout(&handle);
    }
    let delay = (due.millis() - now_millis())
        .ceil()
        .clamp(0.0, 2_147_483_647.0);
    match FIRE_QUEUE_JS.with(|fire| set_timeout(fire, delay, 0.0)) {
        Ok(handle) => {
            timers.shared = Some((due, handle));
            true
        }
        Err(_) => false,
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
