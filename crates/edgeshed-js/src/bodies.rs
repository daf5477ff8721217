//! `Limiter.fetch`: the permit is held until the response body is done, or
//! until it has sat idle for `bodyTimeoutMs`, or its `Response` is collected
//! (edgeshed-wasm's [`body`](edgeshed_wasm::body) primitive).

use crate::host::BODY_IDLE_ERROR;
use core::cell::OnceCell;
use edgeshed_wasm::body::{Hold, Holder};
use wasm_bindgen::prelude::*;

thread_local! {
    /// What keeps a body's pipe alive after its request returned: workerd's
    /// `cloudflare:workers` module (its `waitUntil`), given by the package's
    /// workerd entry; `undefined` elsewhere.
    static WAIT_UNTIL: OnceCell<JsValue> = const { OnceCell::new() };
}

/// Called once by the package's workerd entry with the `cloudflare:workers`
/// module: the pipes of `fetch` bodies then run under its `waitUntil`, so a
/// client that goes away frees the slot at once.
#[wasm_bindgen(js_name = useWaitUntil, skip_typescript)]
pub fn use_wait_until(host: JsValue) {
    WAIT_UNTIL.with(|cell| {
        let _ = cell.set(host);
    });
}

/// The `fetch` bodies one `Limiter` holds, and their `bodyTimeoutMs`.
#[derive(Debug)]
pub(crate) struct Bodies {
    holder: Holder,
    timeout_ms: u32,
    /// `WAIT_UNTIL` when the limiter was made.
    host: JsValue,
}

impl Bodies {
    /// A holder whose bodies may sit idle for `timeout_ms`.
    pub(crate) fn new(timeout_ms: u32) -> Self {
        let host = WAIT_UNTIL.with(|cell| cell.get().cloned().unwrap_or(JsValue::UNDEFINED));
        Self {
            holder: Holder::new(),
            timeout_ms,
            host,
        }
    }

    /// Frees the slots of bodies idle for `bodyTimeoutMs` whose own timer
    /// could not run (see [`Holder::sweep`]).
    pub(crate) fn sweep(&self) {
        self.holder.sweep();
    }

    /// Slots held by response bodies now.
    pub(crate) fn held_bodies(&self) -> f64 {
        self.holder.held_bodies()
    }

    /// Bodies cut because they sat idle for `bodyTimeoutMs`.
    pub(crate) fn body_timeouts(&self) -> f64 {
        self.holder.idle_timeouts()
    }

    /// Returns `response` with its body holding the call handed over as
    /// `id` until it is done, when `release(id, how)` runs (see
    /// [`Running::hand_over_body`](crate::sampling::Running::hand_over_body)).
    pub(crate) fn hold_released(
        &self,
        response: &JsValue,
        release: &JsValue,
        id: f64,
    ) -> Result<JsValue, JsValue> {
        self.with_hold(|hold| {
            self.holder
                .hold_response_released(response, release, id, hold)
        })
    }

    /// Returns `response` with its body holding `permit` until it is done.
    pub(crate) fn hold(
        &self,
        response: &JsValue,
        permit: edgeshed_wasm::held::Lease,
    ) -> Result<JsValue, JsValue> {
        self.with_hold(|hold| self.holder.hold_response(response, permit, hold))
    }

    /// `f` with how this limiter holds its bodies.
    fn with_hold<T>(&self, f: impl FnOnce(&Hold<'_>) -> T) -> T {
        BODY_IDLE_ERROR.with(|idle_reason| {
            f(&Hold {
                idle_ms: self.timeout_ms,
                host: &self.host,
                idle_reason,
            })
        })
    }
}
