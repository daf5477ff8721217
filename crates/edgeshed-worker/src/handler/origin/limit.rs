//! The time limit of one origin call (its own `timeoutMs` and the request's
//! deadline) and its fetch, which is aborted when the call is dropped
//! (cancelled) or its limit passes.

use crate::failure::Failure;
use crate::handler::host::try_abort;
use core::pin::Pin;
use core::time::Duration;
use edgeshed::time::{Clock, Instant};
use edgeshed_wasm::fetch::global_fetch;
use edgeshed_wasm::race::or_never;
use edgeshed_wasm::settled::Settled;
use edgeshed_wasm::JsClock;
use futures_util::future::{select, Either};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::AbortController;

/// Aborts the fetch when dropped, unless the call completed.
pub(crate) struct AbortOnDrop(Option<AbortController>);

impl AbortOnDrop {
    pub(crate) fn new() -> Result<Self, JsValue> {
        Ok(Self(Some(AbortController::new()?)))
    }

    pub(crate) fn signal(&self) -> Option<web_sys::AbortSignal> {
        self.0.as_ref().map(AbortController::signal)
    }

    pub(crate) fn abort(&self) {
        if let Some(controller) = &self.0 {
            // Throws when called on behalf of another request (a reclaimed
            // task, see `task::reclaim_expired`): nothing to do then.
            try_abort(controller);
        }
    }

    pub(crate) fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.abort();
    }
}

/// The earlier of the request deadline and the origin timeout, and which it is.
pub(crate) fn time_limit(
    deadline: Option<Instant>,
    timeout: Option<Duration>,
) -> Option<(Instant, Failure)> {
    let timeout = timeout.map(|t| (JsClock.now() + t, Failure::Timeout));
    let deadline = deadline.map(|at| (at, Failure::Deadline));
    match (deadline, timeout) {
        (Some(d), Some(t)) => Some(if d.0 <= t.0 { d } else { t }),
        (one, other) => one.or(other),
    }
}

/// The time limit of one origin call, with one host timer for all of its
/// phases (the fetch, then its body): a timer set and cleared per phase
/// cost the admitted path a `setTimeout`/`clearTimeout` pair per call.
pub(crate) struct CallLimit {
    why: Failure,
    /// Armed on the first race; cleared when this is dropped.
    timer: Option<Pin<Box<<JsClock as Clock>::Sleep>>>,
}

impl CallLimit {
    /// The limit `time_limit` chose (`None`: no limit).
    pub(crate) fn new(limit: Option<(Instant, Failure)>) -> Self {
        Self {
            why: limit.map_or(Failure::Timeout, |(_, why)| why),
            timer: limit.map(|(at, _)| Box::pin(JsClock.sleep_until(at))),
        }
    }

    /// Races `promise` against the limit; on expiry aborts through `abort`.
    pub(crate) async fn within(
        &mut self,
        promise: js_sys::Promise,
        abort: &AbortOnDrop,
    ) -> Result<JsValue, Failure> {
        let timer = or_never(self.timer.as_mut().map(Pin::as_mut));
        match select(Settled::new(&promise), timer).await {
            Either::Left((Ok(value), _)) => Ok(value),
            Either::Left((Err(_), _)) => Err(Failure::Unreachable),
            Either::Right(((), _)) => {
                abort.abort();
                Err(self.why)
            }
        }
    }
}

/// Fetches `url` with `init` (its signal is set here) within the limit.
pub(crate) async fn fetch_within(
    url: &str,
    init: &web_sys::RequestInit,
    limit: &mut CallLimit,
    abort: &AbortOnDrop,
) -> Result<web_sys::Response, Failure> {
    if let Some(signal) = abort.signal() {
        init.set_signal(Some(&signal));
    }
    let promise = global_fetch(&JsValue::from_str(url), init).map_err(|_| Failure::Unreachable)?;
    let response = limit.within(promise, abort).await?;
    response
        .dyn_into::<web_sys::Response>()
        .map_err(|_| Failure::Unreachable)
}
