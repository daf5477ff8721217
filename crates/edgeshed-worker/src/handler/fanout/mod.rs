//! Fan-out routes: call several origins concurrently and merge their JSON.
//!
//! A request is admitted all-or-nothing: globally, then its calls' permits
//! in one global order of origins, with no call fetching before every
//! required call is admitted ([`FanOutAdmission`], where the order and why
//! it cannot deadlock are written down). The first required call that
//! fails decides the answer (the one failure table, [`crate::failure`]);
//! the others are then dropped, their permits freed and their fetches
//! aborted.

mod call;
mod merge;

use super::concurrently::until_decided;
use super::gateway::Gateway;
use super::respond::ResponseParts;
use super::route::Admitting;
use crate::config::FanOutCall;
use crate::failure::{Failure, Scope};
use crate::fanout_admission::{FanOutAdmission, Planned};
use call::{call_origin, Outcome, Siblings};
use edgeshed::time::{Clock, Instant};
use edgeshed_wasm::JsClock;
use wasm_bindgen::JsValue;

/// Answers a fan-out route: `calls` for a request that entered at `entry`,
/// within its `deadline`, if any, admitted as `admitting` says.
pub(crate) async fn respond(
    gateway: &Gateway,
    request: &web_sys::Request,
    (entry, deadline): (Instant, Option<Instant>),
    calls: &[FanOutCall],
    admitting: Admitting<'_>,
    ctx: &JsValue,
) -> Result<web_sys::Response, JsValue> {
    let retry_after = gateway.config.retry_after_seconds;
    let global = match gateway
        .global
        .admit(entry, deadline, admitting, retry_after)
        .await
    {
        Ok(admitted) => admitted,
        Err(refused) => return refused.into_response(),
    };
    let since = JsClock.now();
    let planned = calls.iter().enumerate().filter_map(|(position, call)| {
        let origin = gateway.origin(call.origin)?;
        Some(Planned {
            position,
            origin: call.origin,
            required: call.required,
            acquire: origin.acquire(admitting.call, deadline, ctx, since),
        })
    });
    let admission = FanOutAdmission::new(planned);
    let siblings = Siblings {
        deadline,
        request,
        admission: &admission,
    };
    let futures: Vec<_> = calls
        .iter()
        .enumerate()
        .map(|(position, call)| {
            let siblings = &siblings;
            async move {
                match gateway.origin(call.origin) {
                    Some(origin) => call_origin(origin, (position, call), siblings).await,
                    None => Outcome {
                        result: Err(Failure::Unreachable),
                        waited: core::time::Duration::ZERO,
                        took: core::time::Duration::ZERO,
                    },
                }
            }
        })
        .collect();
    let (outcomes, decisive) = until_decided(futures, |index, outcome: &Outcome| {
        outcome.result.is_err() && calls.get(index).is_some_and(|call| call.required)
    })
    .await;
    let timings = merge::timings(gateway, global.waited, calls, &outcomes);
    let Some(index) = decisive else {
        return merge::merged(gateway, calls, outcomes, timings);
    };
    let name = calls
        .get(index)
        .and_then(|call| gateway.origin(call.origin))
        .map_or("", |origin| origin.config.name.as_str());
    let failure = outcomes
        .get(index)
        .and_then(|o| o.as_ref())
        .and_then(|o| o.result.as_ref().err().copied())
        .unwrap_or(Failure::Unreachable);
    ResponseParts::failure(failure, Scope::Origin(name), admitting.route, retry_after)
        .timings(timings)
        .into_response()
}
