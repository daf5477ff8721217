//! `Limiter.fetch(input, init)`: the slot is held until the response body
//! is done (see `holdUntilBodyDone` in glue.js).

use super::{abandon, begin, deadline_of, finish_admission};
use crate::counters::CallCounters;
use crate::options::call_options;
use crate::sampling::{ending_of, Running};
use edgeshed::admission::Admission;
use edgeshed::limit::adaptive::{Ending, Outcome};
use edgeshed::time::Clock;
use edgeshed_wasm::abort::abort_reason;
use edgeshed_wasm::clock::JsClock;
use edgeshed_wasm::fetch::global_fetch;
use edgeshed_wasm::race::or_never;
use edgeshed_wasm::settled::Settled;
use edgeshed_wasm::task::spawn;
use futures_util::future::{select, Either};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use web_sys::AbortController;

/// `limiter.fetch(input, init)`.
pub(crate) fn fetch(
    admission: &Admission<JsClock>,
    counters: &Rc<CallCounters>,
    input: JsValue,
    init: JsValue,
) -> js_sys::Promise {
    let counters = Rc::clone(counters);
    let mut options = match call_options(&init, false) {
        Ok(options) => options,
        Err(error) => return js_sys::Promise::reject(&error),
    };
    let deadline = deadline_of(&options);
    let (call, admitting) = match begin(&counters, admission, deadline, &mut options) {
        Ok(begun) => begun,
        Err(rejection) => return rejection,
    };
    let caller = admitting.caller(call, admission);
    spawn(async move {
        let signal = options.signal;
        let permit = finish_admission(admitting, signal.clone(), &caller, &counters).await?;
        // Sampled until the body is done (see sampling.rs), or, for an
        // overload answer (a drop), at its headers.
        let running = Running::new(permit, counters.sampler.as_ref());
        let controller = deadline.map(|_| AbortController::new()).transpose()?;
        let init = match &controller {
            Some(controller) => edgeshed_wasm::fetch::with_signal(&init, &controller.signal())?,
            None => init,
        };
        // An abort of the caller's signal reaches the fetch through
        // `init.signal`: the fetch itself then rejects.
        let pending = global_fetch(&input, &init)?;
        let timer = or_never(deadline.map(|at| JsClock.sleep_until(at)));
        match select(Settled::new(&pending), timer).await {
            Either::Left((Ok(response), _)) => {
                let ending = ending_of(&response);
                if ending.outcome() == Outcome::Served {
                    // Timed as long as the body holds the permit.
                    return running.hand_over_body(|id, release| {
                        counters.bodies.hold_released(&response, release, id)
                    });
                }
                let permit = running.sample(|| ending);
                counters.bodies.hold(&response, permit)
            }
            Either::Left((Err(error), _)) => {
                // A network failure is a drop; the caller's abort is ignored.
                let aborted = signal.is_some_and(|s| !abort_reason(&s).is_undefined());
                let ending = if aborted {
                    Ending::Aborted
                } else {
                    Ending::Failed
                };
                drop(running.sample(|| ending));
                Err(error)
            }
            Either::Right(((), _)) => {
                // The caller's deadline: ignored (see sampling.rs).
                let permit = running.sample(|| Ending::DeadlinePassed);
                CallCounters::bump(&counters.expired_running);
                let error = caller.expired(true);
                if let Some(controller) = controller {
                    controller.abort_with_reason(&error);
                }
                // The aborted fetch still holds its connection until it
                // settles: so does the slot.
                abandon(permit, &pending, &counters);
                Err(error)
            }
        }
    })
}
