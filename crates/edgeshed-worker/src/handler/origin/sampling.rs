//! Adaptive origin limits: one sample per origin call, fed to the origin's
//! [`Controller`], which moves the limit of the origin's semaphore.
//!
//! What a sample is, for every route (fan-out and prefix): the core's one
//! classification ([`Ending::outcome`]) of how the call ended ([`ending`]).
//!
//! * **Latency**: from the moment the call holds its origin permit to the
//!   origin's response headers. The body is not part of it: a proxied body
//!   streams for as long as the client reads, which says nothing about the
//!   origin's load.
//! * **Dropped**: the origin answered 503 or 429 (it says it is overloaded),
//!   its own `timeoutMs` passed before the headers, or the connection failed
//!   (refused, reset, not a response).
//! * **Ignored** (no sample) when the call ends for a reason of the request,
//!   not of the origin: the request's `deadlineMs` passed first, or the
//!   client went away (the call is cancelled). Its latency is unknown — only
//!   that it exceeded what the request could wait — and counting it either
//!   way would let impatient clients move the limit. An origin whose latency
//!   outgrows the deadlines is still seen through the calls with enough
//!   budget left, and through its `timeoutMs` (set it below the routes'
//!   `deadlineMs` to count such answers as drops).
//! * **Served**: any other answer (2xx, 4xx, 5xx other than 503), with its
//!   latency.

use crate::failure::Failure;
use crate::handler::budget::OriginBudget;
use edgeshed::limit::adaptive::{AnyLimit, Controller, Ending, Started};
use edgeshed::time::{Clock, Instant};
use edgeshed_wasm::JsClock;
use std::rc::Rc;

/// A call being sampled for an adaptive origin; fed to the controller by
/// [`Sampling::headers`]. Dropped without it (cancelled): no sample.
pub(crate) struct Sampling {
    /// The origin's own adaptive limit, if any.
    local: Option<(Controller<AnyLimit>, Started)>,
    /// An adaptive fleet budget's holder (it reports the call with its next
    /// lease call): the budget, the epoch the call started in, when, and
    /// the isolate's calls in flight then.
    fleet: Option<(Rc<OriginBudget>, u64, Instant, u32)>,
}

/// Starts sampling a call to an origin with the adaptive limit `local`
/// and the fleet budget `budget`, if either is adaptive. Call it once the
/// call holds its origin permit.
pub(crate) fn start(
    local: Option<&Controller<AnyLimit>>,
    budget: Option<&Rc<OriginBudget>>,
) -> Option<Sampling> {
    let local = local.map(|controller| (controller.clone(), controller.start(&JsClock)));
    let fleet = budget
        .filter(|budget| budget.config.adaptive.is_some())
        .map(|budget| {
            let holder = budget.holder.borrow();
            (
                Rc::clone(budget),
                holder.epoch(),
                JsClock.now(),
                holder.in_flight(),
            )
        });
    (local.is_some() || fleet.is_some()).then_some(Sampling { local, fleet })
}

/// How a call that reached this point ended, for the core to classify.
/// `fetched` is the origin's status, or why there is none.
pub(crate) fn ending(fetched: Result<u16, Failure>) -> Ending {
    match fetched {
        Ok(status) | Err(Failure::Status(status)) => Ending::Status(status),
        Err(Failure::Timeout) => Ending::TimedOut,
        Err(Failure::Unreachable) => Ending::Failed,
        Err(Failure::Deadline) => Ending::DeadlinePassed,
        // Not outcomes of a fetch (never passed here): the limit's own
        // refusals, and a body too large after the origin answered.
        Err(Failure::Overloaded(_) | Failure::RateLimited(_)) => Ending::Overloaded,
        Err(Failure::TooLarge) => Ending::Completed,
    }
}

impl Sampling {
    /// The call's response headers arrived (or it failed before them):
    /// feeds the sample as the core classifies its ending.
    pub(crate) fn headers(self, fetched: Result<u16, Failure>) {
        let outcome = ending(fetched).outcome();
        if let Some((controller, started)) = self.local {
            controller.finish(started, &JsClock, outcome);
        }
        if let Some((budget, epoch, started, in_flight)) = self.fleet {
            let rtt = JsClock.now().saturating_duration_since(started);
            budget
                .holder
                .borrow_mut()
                .sample(epoch, outcome, rtt, in_flight);
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
