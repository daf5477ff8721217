//! The registry of armed sleeps and the host timers that fire them: one
//! host timer per sleep in workerd, one shared timer (earliest deadline
//! first) elsewhere.

use crate::clock::now_millis;
use crate::id_map::{id_from_js, Registry};
use core::cell::RefCell;
use core::cmp::Reverse;
use core::task::{Context, Waker};
use std::collections::BinaryHeap;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// `setTimeout(callback, ms, id)`: the callback receives the id.
    #[wasm_bindgen(js_name = setTimeout)]
    #[wasm_bindgen(catch)]
    pub(crate) fn set_timeout(
        callback: &js_sys::Function,
        milliseconds: f64,
        id: f64,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = clearTimeout, catch)]
    pub(crate) fn clear_timeout(handle: &JsValue) -> Result<(), JsValue>;
}

/// A deadline in ms as a totally ordered key (non-negative `f64`s order
/// like their bit patterns).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Due(pub(crate) u64);

impl Due {
    pub(crate) fn at(millis: f64) -> Self {
        Self(millis.max(0.0).to_bits())
    }

    pub(crate) fn millis(self) -> f64 {
        f64::from_bits(self.0)
    }
}

/// One sleep's state in the registry.
pub(crate) struct Timer {
    /// The waker the sleep was last polled with: a timer wakes whoever
    /// polls it, never a task found some other way.
    pub(crate) waker: Option<Waker>,
    pub(crate) fired: bool,
}

impl Timer {
    pub(crate) fn new(cx: &Context<'_>) -> Self {
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
pub(crate) struct Timers {
    /// Every sleep that has been polled and not dropped yet.
    pub(crate) armed: Registry<Timer>,
    /// Sleeps served by the shared host timer, earliest first. A sleep
    /// dropped early stays in the heap until it surfaces (or the heap is
    /// compacted): only ids still in `armed` count.
    pub(crate) queue: BinaryHeap<Reverse<(Due, u64)>>,
    /// How many sleeps in `queue` are still armed.
    pub(crate) queued: usize,
    /// The shared host timer, and the deadline it is set for.
    pub(crate) shared: Option<(Due, JsValue)>,
}

thread_local! {
    pub(crate) static TIMERS: RefCell<Timers> = RefCell::new(Timers::default());
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
    pub(crate) static FIRE_JS: js_sys::Function = FIRE.with(|fire| crate::task::guard(fire.as_ref(), "timer"));
    /// `FIRE_QUEUE`, guarded.
    static FIRE_QUEUE_JS: js_sys::Function =
        FIRE_QUEUE.with(|fire| crate::task::guard(fire.as_ref(), "timer queue"));
}

/// Sets the shared host timer for `due`, replacing an earlier setting;
/// `false` if the host refused a timer.
pub(crate) fn arm_shared(timers: &mut Timers, due: Due) -> bool {
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
