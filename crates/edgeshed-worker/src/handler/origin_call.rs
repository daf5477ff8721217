//! One call to an origin under its limiter, its own timeout and the request's
//! deadline. A call that is dropped (cancelled) aborts its fetch.

use super::state::Gateway;
use core::pin::Pin;
use core::time::Duration;
use edgeshed::admission::AdmitError;
use edgeshed::semaphore::Permit;
use edgeshed::time::{Clock, Instant};
use edgeshed_wasm::fetch::global_fetch;
use edgeshed_wasm::race::or_never;
use edgeshed_wasm::settled::Settled;
use edgeshed_wasm::JsClock;
use futures_util::future::{select, Either};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::AbortController;

/// Why an origin call failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Failure {
    /// Its limiter or its fleet budget refused it (503), and why.
    Overloaded(super::refusal::Refusal),
    /// The request's deadline passed first.
    Deadline,
    /// The origin's own `timeoutMs` passed first.
    Timeout,
    /// Unreachable, reset, or not a valid response.
    Unreachable,
    /// Answered with a non-2xx status.
    Status(u16),
    /// Answered with a body larger than the origin's `maxBodyBytes`.
    TooLarge,
}

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/handler/glue.js")]
extern "C" {
    /// `controller.abort()`, ignoring a throw.
    #[wasm_bindgen(js_name = tryAbort)]
    fn try_abort(controller: &AbortController);
}

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

/// An origin permit: the local limiter's and, for a budgeted origin, the
/// fleet budget's. Dropping it frees both.
pub(crate) struct OriginPermit {
    _local: Permit,
    _budget: Option<super::budget::BudgetPermit>,
}

/// Waits for a permit of origin `index` (its local limit, then its fleet
/// budget, if any, in the request's budget order `turn`); returns it and
/// the time waited.
pub(crate) async fn admit_origin(
    gateway: &Gateway,
    index: usize,
    deadline: Option<Instant>,
    ctx: &JsValue,
    turn: Option<&crate::budget::Ticket<'_>>,
) -> Result<(OriginPermit, Duration), Failure> {
    let admission = gateway.origins.get(index).ok_or(Failure::Unreachable)?;
    let start = JsClock.now();
    let admit = match deadline {
        Some(at) => admission.admit_before(at),
        None => admission.admit(),
    };
    let outcome = edgeshed_wasm::task::RemoteWake::new(admit).await;
    let outcome = match (outcome, gateway.budgets.get(index).and_then(Option::as_ref)) {
        (Ok(local), Some(budget)) => {
            if let Some(ticket) = turn {
                ticket.turn().await;
            }
            let timeout = gateway.config.origins.get(index).and_then(|o| o.timeout);
            match budget.admit(ctx, time_limit(deadline, timeout)).await {
                Ok(budget) => Ok((local, Some(budget))),
                Err(failure) => return Err(failure),
            }
        }
        (outcome, _) => outcome.map(|local| (local, None)),
    };
    let waited = JsClock.now().saturating_duration_since(start);
    if let Some(histogram) = gateway.metrics.borrow_mut().origin_wait.get_mut(index) {
        histogram.observe(waited);
    }
    match outcome {
        Ok((local, budget)) => Ok((
            OriginPermit {
                _local: local,
                _budget: budget,
            },
            waited,
        )),
        Err(AdmitError::Expired) => Err(Failure::Deadline),
        // Overloaded, closed, or a refusal added to the core later.
        Err(error) => Err(Failure::Overloaded(super::refusal::Refusal::of(&error))),
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
