//! Response bodies that hold a permit until they are done: one primitive
//! for the npm package's `Limiter.fetch` and for a gateway's proxied bodies.
//!
//! The body is relayed (in JavaScript, `glue.js` `holdBody`) through a
//! stream of ours, which is what the caller hands on: for a body sent to the
//! client on workerd ([`Holder::hold_body`]) a pipe into a
//! `FixedLengthStream` (the declared length kept) or an
//! `IdentityTransformStream`, whose pipe fails when the client goes away;
//! elsewhere, and for a `Response` handed to user code
//! ([`Holder::hold_response`]: workerd cannot pipe one of its own streams
//! into another), a stream that reads one chunk of the origin's body each
//! time the consumer reads, so an unread body keeps its permit. The permit
//! comes back once, when the first of these happens:
//!
//! - the body has been read to the end, was cancelled, or errored;
//! - on workerd, its client went away;
//! - no chunk moved through it for the idle timeout: the origin went silent,
//!   or the consumer stopped reading (nothing is read from the origin then). The
//!   body is then errored with the caller's reason and the origin's stream
//!   cancelled, counted in [`Holder::idle_timeouts`];
//! - ([`Holder::hold_response`]) its `Response` was garbage-collected unread.
//!
//! On workerd, pass the request's context (`ctx`, or any object with a
//! `waitUntil` method) as [`Hold::host`]: the pipe then runs under
//! `waitUntil` (the relay's end, for a `Response`), and sees the client go
//! away after the response is returned.
//! A body's timer dies with its request: call [`Holder::sweep`] on later
//! calls, which expires the bodies idle too long.

use crate::host::js;
use core::cell::Cell;
use wasm_bindgen::prelude::*;

/// How a body is held.
#[derive(Clone, Copy, Debug)]
pub struct Hold<'a> {
    /// The longest no chunk may move through the body, in ms.
    pub idle_ms: u32,
    /// An object whose `waitUntil(promise)` keeps the pipe alive (workerd's
    /// `ctx`, or the `cloudflare:workers` module), or `undefined`.
    pub host: &'a JsValue,
    /// A JavaScript function `(idleMs) => reason` that makes the error an
    /// idle body is cut with, or `undefined` for a plain `Error`.
    pub idle_reason: &'a JsValue,
}

/// The bodies held for one owner (a limiter, a gateway): their counts, and
/// their expiry checks for [`sweep`](Self::sweep). The state is in
/// JavaScript, where the bodies are: a body's end costs no call into the
/// wasm besides its release.
#[derive(Debug)]
pub struct Holder {
    js: js::BodyHolder,
    /// No fewer than the bodies held now: raised by each hold, set to the
    /// exact count by each sweep (a body's end is counted in JavaScript).
    may_hold: Cell<f64>,
}

impl Default for Holder {
    fn default() -> Self {
        Self::new()
    }
}

impl Holder {
    /// A holder of no bodies yet.
    pub fn new() -> Self {
        Self {
            js: js::body_holder(),
            may_hold: Cell::new(0.0),
        }
    }

    /// Bodies holding their permits now.
    pub fn held_bodies(&self) -> f64 {
        self.js.held_bodies()
    }

    /// Bodies cut because no chunk moved through them for their timeout.
    pub fn idle_timeouts(&self) -> f64 {
        self.js.body_timeouts()
    }

    /// Frees the permits of bodies idle past their timeout whose own timer
    /// could not run (workerd, once their request is gone); cheap (a clock
    /// read) until one may have, and no call into JavaScript while no body
    /// is held.
    pub fn sweep(&self) {
        if self.may_hold.get() > 0.0 {
            self.may_hold.set(js::sweep_bodies(&self.js));
        }
    }

    /// `response` with its body holding `permit` until it is done (see the
    /// module): a copy of `response` (`response` itself if it has no body,
    /// its permit then freed at once), also freed if that copy is
    /// garbage-collected unread.
    pub fn hold_response(
        &self,
        response: &JsValue,
        permit: impl Into<crate::held::Lease>,
        hold: &Hold<'_>,
    ) -> Result<JsValue, JsValue> {
        let id = crate::held::hold(permit);
        crate::held::with_release(|release| self.hold(response, release, id, hold, true))
    }

    /// [`hold_response`](Self::hold_response) with the caller's own
    /// `release(id)` (a JavaScript function) instead of a permit: called
    /// once when the body is done, as the permit would be returned.
    pub fn hold_response_released(
        &self,
        response: &JsValue,
        release: &JsValue,
        id: f64,
        hold: &Hold<'_>,
    ) -> Result<JsValue, JsValue> {
        self.hold(response, release, id, hold, true)
    }

    /// The body of `response` as a new stream that keeps `permits` until it
    /// is done (see the module); `None` (and `permits` dropped) if it has no
    /// body.
    pub fn hold_body<P: 'static>(
        &self,
        response: &JsValue,
        permits: P,
        hold: &Hold<'_>,
    ) -> Result<Option<JsValue>, JsValue> {
        let release = Closure::once_into_js(move |_id: f64| drop(permits));
        let body = self.hold(response, &release, 0.0, hold, false)?;
        Ok((!body.is_null()).then_some(body))
    }

    fn hold(
        &self,
        response: &JsValue,
        release: &JsValue,
        id: f64,
        hold: &Hold<'_>,
        wrap: bool,
    ) -> Result<JsValue, JsValue> {
        // Counted before the call: a body held is swept, even if the
        // wrapping throws after counting it.
        self.may_hold.set(self.may_hold.get() + 1.0);
        js::hold_body(
            &self.js,
            response,
            f64::from(hold.idle_ms),
            hold.host,
            hold.idle_reason,
            release,
            id,
            wrap,
        )
    }
}
