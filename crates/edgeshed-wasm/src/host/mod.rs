//! The JavaScript host, behind one small trait.
//!
//! [`js`] holds every binding of the crate (no other module declares an
//! `extern` block). [`Platform`] is what the timers need from a host: a
//! clock in milliseconds and one-shot timers that call back with an id.
//! [`JsPlatform`] is the real one; in native unit tests a fake (`fake.rs`)
//! with a manual clock stands in for it.

#[cfg(all(test, not(target_arch = "wasm32")))]
pub(crate) mod fake;
pub(crate) mod js;

/// Which of the timers' callbacks a host timer calls when it fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Callback {
    /// Fires the one sleep whose id the timer carries.
    Fire,
    /// Fires every sleep of the shared queue that is due.
    FireQueue,
}

/// What the timers take from the host.
pub(crate) trait Platform {
    /// A host timer, as its host hands it out.
    type Timer;
    /// The monotonic clock, in ms.
    fn now_ms(&self) -> f64;
    /// Sets a timer that calls `callback` with `id` after `delay_ms`; `None`
    /// if the host refused (it must not throw).
    fn set_timeout(&self, callback: Callback, delay_ms: f64, id: u64) -> Option<Self::Timer>;
    /// Clears a timer (one that fired or is unknown is ignored).
    fn clear_timeout(&self, timer: &Self::Timer);
}

/// The JavaScript host: `performance.now()` and `setTimeout`, calling the
/// (guarded) callbacks it was made with.
pub(crate) struct JsPlatform {
    /// Called for [`Callback::Fire`].
    pub(crate) fire: js_sys::Function,
    /// Called for [`Callback::FireQueue`].
    pub(crate) fire_queue: js_sys::Function,
}

impl Platform for JsPlatform {
    type Timer = wasm_bindgen::JsValue;

    fn now_ms(&self) -> f64 {
        js::now_millis()
    }

    fn set_timeout(&self, callback: Callback, delay_ms: f64, id: u64) -> Option<Self::Timer> {
        let callback = match callback {
            Callback::Fire => &self.fire,
            Callback::FireQueue => &self.fire_queue,
        };
        // Ids stay below 2^53: exact as JavaScript numbers.
        js::set_timeout(callback, delay_ms, &(id as f64).into()).ok()
    }

    fn clear_timeout(&self, timer: &Self::Timer) {
        let _ = js::clear_timeout(timer);
    }
}
