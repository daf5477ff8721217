use crate::time::{Clock, Instant};
use core::cell::RefCell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::collections::HashSet;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// `setTimeout(callback, ms, id)`: the callback receives the id.
    #[wasm_bindgen(js_name = setTimeout)]
    #[wasm_bindgen(catch)]
    fn set_timeout(
        callback: &js_sys::Function,
        milliseconds: f64,
        id: u32,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = clearTimeout, catch)]
    fn clear_timeout(handle: &JsValue) -> Result<(), JsValue>;
    /// `performance.now()`, where the host has it.
    #[wasm_bindgen(js_namespace = performance, js_name = now, catch)]
    fn performance_now() -> Result<f64, JsValue>;
}

/// Time from the JavaScript host: `performance.now()` (or `Date.now()`
/// where there is no `performance`) and `setTimeout` timers.
///
/// In workerd both clocks advance only across I/O, which is exactly what
/// timeouts and deadlines need there.
#[derive(Clone, Copy, Debug, Default)]
pub struct JsClock;

fn now_millis() -> f64 {
    performance_now().unwrap_or_else(|_| js_sys::Date::now())
}

impl Clock for JsClock {
    type Sleep = JsSleep;

    fn now(&self) -> Instant {
        Instant::from_origin(Duration::from_secs_f64(now_millis().max(0.0) / 1000.0))
    }

    fn sleep_until(&self, deadline: Instant) -> JsSleep {
        let delay = deadline.saturating_duration_since(self.now());
        JsSleep {
            delay_ms: (delay.as_secs_f64() * 1000.0).ceil(),
            timer: None,
        }
    }
}

/// A `setTimeout` as a future. The timer is set on the first poll and
/// cleared if the future is dropped first.
///
/// Timers share one long-lived callback that receives the timer's id, so a
/// timer that fires late (or that the host could not clear) finds nothing to
/// do instead of calling freed memory.
#[must_use = "futures do nothing unless polled"]
pub struct JsSleep {
    delay_ms: f64,
    timer: Option<(u32, JsValue)>,
}

#[derive(Default)]
struct Timers {
    next_id: u32,
    /// Armed timers: the waker, and the executor task that armed it (if
    /// any); removed when the timer fires (the id then moves to `fired`).
    armed: super::task::IdMap<(Option<Waker>, Option<u32>)>,
    fired: HashSet<u32, core::hash::BuildHasherDefault<super::task::IdHasher>>,
}

thread_local! {
    static TIMERS: RefCell<Timers> = RefCell::new(Timers::default());
    static FIRE: Closure<dyn FnMut(JsValue)> = Closure::new(|id: JsValue| {
        let Some(id) = id.as_f64().map(|id| id as u32) else { return };
        let armed = TIMERS.with(|timers| {
            let mut timers = timers.borrow_mut();
            let armed = timers.armed.remove(&id)?;
            timers.fired.insert(id);
            Some(armed)
        });
        // A timer fires in the context of the request that armed it: step
        // that task right here instead of through a wake (see `task`).
        match armed {
            Some((_, Some(task))) => super::task::step(task),
            Some((Some(waker), None)) => waker.wake(),
            _ => {}
        }
    });
}

thread_local! {
    /// `FIRE`, guarded like the executor's steps.
    static FIRE_JS: js_sys::Function = FIRE.with(|fire| super::task::guard(fire.as_ref(), "timer"));
}

impl Future for JsSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Some((id, _)) = &self.timer else {
            let id = TIMERS.with(|timers| {
                let mut timers = timers.borrow_mut();
                let id = timers.next_id;
                timers.next_id = timers.next_id.wrapping_add(1);
                timers
                    .armed
                    .insert(id, (Some(cx.waker().clone()), super::task::current()));
                id
            });
            // setTimeout's delay is a signed 32-bit millisecond count.
            let delay = self.delay_ms.clamp(0.0, 2_147_483_647.0);
            let armed = FIRE_JS.with(|fire| set_timeout(fire, delay, id));
            return match armed {
                Ok(handle) => {
                    self.timer = Some((id, handle));
                    Poll::Pending
                }
                // The host refused a timer (a request being torn down): an
                // exception must not unwind through the executor's poll, so
                // the sleep simply ends now.
                Err(_) => {
                    TIMERS.with(|timers| timers.borrow_mut().armed.remove(&id));
                    self.timer = None;
                    self.delay_ms = 0.0;
                    Poll::Ready(())
                }
            };
        };
        let id = *id;
        TIMERS.with(|timers| {
            let mut timers = timers.borrow_mut();
            if timers.fired.contains(&id) {
                return Poll::Ready(());
            }
            if let Some((slot, task)) = timers.armed.get_mut(&id) {
                if task.is_none() {
                    *task = super::task::current();
                }
                match slot {
                    Some(waker) if waker.will_wake(cx.waker()) => {}
                    _ => *slot = Some(cx.waker().clone()),
                }
            }
            Poll::Pending
        })
    }
}

impl Drop for JsSleep {
    fn drop(&mut self) {
        let Some((id, handle)) = self.timer.take() else {
            return;
        };
        let was_armed = TIMERS.with(|timers| {
            let mut timers = timers.borrow_mut();
            timers.fired.remove(&id);
            timers.armed.remove(&id).is_some()
        });
        if was_armed {
            let _ = clear_timeout(&handle);
        }
    }
}
