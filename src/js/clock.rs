use crate::time::{Clock, Instant};
use core::cell::RefCell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(callback: &js_sys::Function, milliseconds: f64) -> JsValue;
    #[wasm_bindgen(js_name = clearTimeout)]
    fn clear_timeout(handle: &JsValue);
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
#[must_use = "futures do nothing unless polled"]
pub struct JsSleep {
    delay_ms: f64,
    timer: Option<Timer>,
}

struct Timer {
    state: Rc<RefCell<TimerState>>,
    handle: JsValue,
    // Keeps the callback alive as long as the timer can fire.
    _callback: Closure<dyn FnMut()>,
}

#[derive(Default)]
struct TimerState {
    fired: bool,
    waker: Option<Waker>,
}

impl Future for JsSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let delay_ms = self.delay_ms;
        let timer = self.timer.get_or_insert_with(|| {
            let state = Rc::new(RefCell::new(TimerState::default()));
            let fired = Rc::clone(&state);
            let callback = Closure::<dyn FnMut()>::new(move || {
                let waker = {
                    let mut state = fired.borrow_mut();
                    state.fired = true;
                    state.waker.take()
                };
                if let Some(waker) = waker {
                    waker.wake();
                }
            });
            // setTimeout's delay is a signed 32-bit millisecond count.
            let handle = set_timeout(
                callback.as_ref().unchecked_ref(),
                delay_ms.clamp(0.0, 2_147_483_647.0),
            );
            Timer {
                state,
                handle,
                _callback: callback,
            }
        });
        let mut state = timer.state.borrow_mut();
        if state.fired {
            return Poll::Ready(());
        }
        match &state.waker {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            _ => state.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

impl Drop for JsSleep {
    fn drop(&mut self) {
        if let Some(timer) = &self.timer {
            if !timer.state.borrow().fired {
                clear_timeout(&timer.handle);
            }
        }
    }
}
