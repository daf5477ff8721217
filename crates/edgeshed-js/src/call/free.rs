//! The fast start of a `limiter.run(fn, options)` without a signal or a
//! deadline that finds a free slot: glue.js's `run` reads the options
//! (call-options.js `callFacts`), asks for the permit here first (one call
//! into the wasm that returns a number), runs the task itself and returns
//! the permit through the same release function as the whole path (`run.rs`).
//!
//! Why by hand: the whole path crosses between JavaScript and the wasm six
//! times for such a call (the options, the task, its result twice, the
//! release, the externref table each way) and was 2.8 × @henrygd/queue's
//! time per call uncontended (benches/node/limiter.bench.mjs, issue 32).
//! Everything else (a signal, a deadline, no free permit, a closed limiter,
//! a rate limit) takes the whole path, which decides as before: nothing is
//! counted here unless the call is admitted.

use crate::counters::CallCounters;
use crate::options::options_of_facts;
use crate::sampling::Running;
use edgeshed::admission::{Admission, Criticality};
use edgeshed_wasm::clock::JsClock;
use wasm_bindgen::JsValue;

/// `callFacts` of no options (call-options.js: criticality 3, nothing else).
const NO_OPTIONS: f64 = 3.0;

/// A free permit for a call of the options `callFacts` read as `facts`
/// (and their `key`, passed here rather than fetched: a string returned by
/// an import costs a trip through a `DataView` of the memory), held for
/// JavaScript: its id for [`release_function`]'s `release(id, rejected,
/// reason)`, or -1 when the call must take the whole path.
pub(crate) fn take_free(
    admission: &Admission<JsClock>,
    counters: &CallCounters,
    facts: f64,
    key: Option<String>,
) -> f64 {
    counters.bodies.sweep();
    if counters.lifecycle.is_closed() || facts < 0.0 {
        return -1.0;
    }
    let key = core::cell::Cell::new(key);
    // No options at all (glue.js's NO_OPTIONS): a default call without a
    // key, decided without decoding (5 % of a plain call, CPU profile).
    if facts == NO_OPTIONS {
        let Some(permit) = admission.try_admit_as(Criticality::Default) else {
            return -1.0;
        };
        return Running::new(counters.lease(permit), counters.sampler.as_ref())
            .hand_over(|id, _| id);
    }
    let options = options_of_facts(facts, &|| key.take().unwrap_or_default());
    if options.signal.is_some() || options.deadline.is_some() {
        return -1.0;
    }
    // A first call that names its criticality puts the default reserve in
    // place, before it is admitted (as `begin` does).
    counters.reserve_for(&options, admission);
    let permit = match &options.key {
        None => admission.try_admit_as(options.criticality),
        Some(key) => admission.try_admit_keyed(options.criticality, key, options.weight),
    };
    let Some(permit) = permit else {
        return -1.0;
    };
    Running::new(counters.lease(permit), counters.sampler.as_ref()).hand_over(|id, _| id)
}

/// The function that returns a permit [`take_free`] held (the one the whole
/// path hands to glue.js: sampling for an adaptive limiter).
pub(crate) fn release_function(counters: &CallCounters) -> JsValue {
    Running::release_function(counters.sampler.is_some())
}
