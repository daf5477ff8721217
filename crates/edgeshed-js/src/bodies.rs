//! `Limiter.fetch`: the permit is held until the response body is done, or
//! until it has sat idle for `bodyTimeoutMs`, or its `Response` is collected.

use core::cell::Cell;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/glue.js")]
extern "C" {
    /// The `fetch` bodies one `Limiter` holds: its `bodyTimeoutMs` and their
    /// counts. Kept in JavaScript, where the bodies are, so that a body's
    /// end, cancel or timeout costs no call into the wasm besides the release.
    #[derive(Debug)]
    type Holder;

    /// `{ timeoutMs, heldBodies: 0, bodyTimeouts: 0 }`.
    #[wasm_bindgen(js_name = bodyHolder)]
    fn body_holder(timeout_ms: u32) -> Holder;

    /// Slots held by response bodies now.
    #[wasm_bindgen(method, getter, js_name = heldBodies)]
    fn held_bodies(this: &Holder) -> f64;

    /// Bodies cancelled because they sat idle for `bodyTimeoutMs`.
    #[wasm_bindgen(method, getter, js_name = bodyTimeouts)]
    fn body_timeouts(this: &Holder) -> f64;

    /// Expires the bodies of `bodies` that sat idle for its timeout; cheap
    /// (a clock read) until one may have. Their own timers do it, except in
    /// workerd once the request that made the fetch is gone: its timers never
    /// fire, so a later call (of any request) does it. Returns how many
    /// bodies are still held.
    #[wasm_bindgen(js_name = sweepBodies)]
    fn sweep_bodies(bodies: &Holder) -> f64;

    /// Wraps `response` so that `release(id)` runs once its body has been
    /// read to the end, errored, been cancelled, sat idle (neither pulled by
    /// the consumer nor fed by the origin) for the holder's `timeoutMs`, or
    /// its `Response` was garbage-collected (at once if it has no body); a
    /// synchronous throw (after `release(id)` ran) becomes `Err`.
    #[wasm_bindgen(js_name = holdUntilBodyDone, catch)]
    fn hold_until_body_done(
        bodies: &Holder,
        response: &JsValue,
        id: f64,
        release: &JsValue,
    ) -> Result<JsValue, JsValue>;

    /// A copy of `init` whose `signal` also aborts when `signal` does.
    #[wasm_bindgen(js_name = withSignal, catch)]
    pub(crate) fn with_signal(
        init: &JsValue,
        signal: &web_sys::AbortSignal,
    ) -> Result<JsValue, JsValue>;
}

/// The `fetch` bodies one `Limiter` holds (their state is in JavaScript),
/// and whether any may be held: a limiter that holds none (every `run`-only
/// limiter) sweeps without calling into JavaScript.
#[derive(Debug)]
pub(crate) struct Bodies {
    holder: Holder,
    /// No fewer than the bodies held now: set by each hold, and to the exact
    /// count by each sweep (a body's end is counted in JavaScript only).
    may_hold: Cell<f64>,
}

impl Bodies {
    /// A holder whose bodies may sit idle for `timeout_ms`.
    pub(crate) fn new(timeout_ms: u32) -> Self {
        Self {
            holder: body_holder(timeout_ms),
            may_hold: Cell::new(0.0),
        }
    }

    /// Frees the slots of bodies idle for `bodyTimeoutMs` whose own timer
    /// could not run (see [`sweep_bodies`]); nothing to do (and no call into
    /// JavaScript) while no body is held.
    pub(crate) fn sweep(&self) {
        if self.may_hold.get() > 0.0 {
            self.may_hold.set(sweep_bodies(&self.holder));
        }
    }

    /// Slots held by response bodies now.
    pub(crate) fn held_bodies(&self) -> f64 {
        self.holder.held_bodies()
    }

    /// Bodies cancelled because they sat idle for `bodyTimeoutMs`.
    pub(crate) fn body_timeouts(&self) -> f64 {
        self.holder.body_timeouts()
    }

    /// Returns `response` with its body holding `permit` until it is done
    /// (see [`hold_until_body_done`]).
    pub(crate) fn hold(
        &self,
        response: &JsValue,
        permit: edgeshed::semaphore::Permit,
    ) -> Result<JsValue, JsValue> {
        let id = edgeshed_wasm::held::hold(permit);
        // Counted before the call: a body held is swept, even if the
        // wrapping throws after counting it.
        self.may_hold.set(self.may_hold.get() + 1.0);
        edgeshed_wasm::held::with_release(|release| {
            hold_until_body_done(&self.holder, response, id, release)
        })
    }
}
