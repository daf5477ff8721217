//! Adaptive origin limits: one sample per origin call, fed to the origin's
//! [`Controller`], which moves the limit of the origin's semaphore.
//!
//! What a sample is, for every route (fan-out and prefix):
//!
//! * **Latency**: from the moment the call holds its origin permit to the
//!   origin's response headers. The body is not part of it: a proxied body
//!   streams for as long as the client reads, which says nothing about the
//!   origin's load.
//! * **Drop**: the origin answered 503 or 429 (it says it is overloaded),
//!   its own `timeoutMs` passed before the headers, or the connection failed
//!   (refused, reset, not a response).
//! * **No sample at all** when the call ends for a reason of the request,
//!   not of the origin: the request's `deadlineMs` passed first, or the
//!   client went away (the call is cancelled). Its latency is unknown — only
//!   that it exceeded what the request could wait — and counting it either
//!   way would let impatient clients move the limit: as a drop, a short
//!   deadline would drive the limit to its minimum against a healthy origin;
//!   as a success, its truncated latency would hide a slow one. An origin
//!   whose latency outgrows the deadlines is still seen through the calls
//!   with enough budget left, and through its `timeoutMs` (set it below the
//!   routes' `deadlineMs` to count such answers as drops).
//! * Any other answer (2xx, 4xx, 5xx other than 503) is a success with its
//!   latency: the origin served it.

use super::origin_call::Failure;
use super::state::Gateway;
use crate::config::{Config, ConfigError};
use edgeshed::admission::Admission;
use edgeshed::limit::adaptive::{AnyLimit, Controller, Started};
use edgeshed::time::Clock;
use edgeshed_wasm::JsClock;

/// A call being sampled for an adaptive origin; fed to the controller by
/// [`Sampling::headers`]. Dropped without it (cancelled): no sample.
pub(crate) struct Sampling {
    controller: Controller<AnyLimit>,
    started: Started,
}

/// Starts sampling a call to origin `index`, if its limit is adaptive. Call
/// it once the call holds its origin permit.
pub(crate) fn start(gateway: &Gateway, index: usize) -> Option<Sampling> {
    let controller = gateway.controllers.get(index)?.as_ref()?.clone();
    let started = controller.start(JsClock.now());
    Some(Sampling {
        controller,
        started,
    })
}

/// Whether a call that reached this point was dropped (`Some(true)`),
/// served (`Some(false)`), or ended for the request's sake (`None`: not
/// sampled). `fetched` is the origin's status, or why there is none.
pub(crate) fn verdict(fetched: Result<u16, Failure>) -> Option<bool> {
    match fetched {
        Ok(status) => Some(status == 503 || status == 429),
        Err(Failure::Timeout | Failure::Unreachable) => Some(true),
        Err(Failure::Deadline) => None,
        // Not outcomes of a fetch; never passed here, and not the origin's.
        Err(Failure::Overloaded(_) | Failure::Status(_) | Failure::TooLarge) => None,
    }
}

impl Sampling {
    /// The call's response headers arrived (or it failed before them):
    /// feeds the sample, unless the verdict is "not sampled".
    pub(crate) fn headers(self, fetched: Result<u16, Failure>) {
        if let Some(dropped) = verdict(fetched) {
            self.controller.finish(self.started, JsClock.now(), dropped);
        }
    }
}

/// Feeds the outcome of a fetch to `sampling`, if any: the status of the
/// response, or why there is none.
pub(crate) fn sample_fetch(
    sampling: Option<Sampling>,
    fetched: &Result<web_sys::Response, Failure>,
) {
    if let Some(sampling) = sampling {
        sampling.headers(match fetched {
            Ok(response) => Ok(response.status()),
            Err(failure) => Err(*failure),
        });
    }
}

/// The controllers of `config`'s adaptive origins, driving the semaphores
/// of `admissions` (one per origin, in order); `None` for fixed origins.
pub(crate) fn controllers(
    config: &Config,
    admissions: &[Admission<JsClock>],
) -> Result<Vec<Option<Controller<AnyLimit>>>, ConfigError> {
    config
        .origins
        .iter()
        .zip(admissions)
        .map(|(origin, admission)| {
            let Some(adaptive) = &origin.adaptive else {
                return Ok(None);
            };
            let algorithm = adaptive.build().map_err(|error| {
                ConfigError::new(format!("origins.{}.adaptive: {error}", origin.name))
            })?;
            Ok(Some(Controller::new(
                algorithm,
                admission.semaphore().clone(),
            )))
        })
        .collect()
}
