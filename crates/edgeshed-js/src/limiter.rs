//! The `Limiter` class exported to JavaScript.

use crate::counters::CallCounters;
use crate::errors::type_error;
use crate::host::checked_limit;
use crate::lifecycle::Lifecycle;
use crate::options::{limiter_options, LimitOption};
use crate::sampling::Sampler;
use crate::stats::{stats_js, Sources};
use edgeshed::admission::Admission;
use edgeshed::limit::adaptive::Limit;
use edgeshed_wasm::clock::JsClock;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// Admission control for JavaScript callers (the npm package's `Limiter`).
/// Its TypeScript declarations are in `typescript.rs`.
#[wasm_bindgen(skip_typescript)]
pub struct Limiter {
    admission: Admission<JsClock>,
    /// Counters kept by the JS face (not by the core's `Admission`).
    counters: Rc<CallCounters>,
}

#[wasm_bindgen]
impl Limiter {
    /// `new Limiter({ maxInFlight | adaptive, maxQueue, queueTimeoutMs,
    /// bodyTimeoutMs, reserve, queueDiscipline, codelTargetMs, maxQueueWait, rate })`; throws a `TypeError`/`RangeError` naming the
    /// invalid option.
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue) -> Result<Limiter, JsValue> {
        let options = limiter_options(&options)?;
        let initial = match &options.limit {
            LimitOption::Fixed(max_in_flight) => *max_in_flight,
            LimitOption::Adaptive(algorithm) => algorithm.limit(),
        };
        // `limiter_options` refuses what the core refuses; a refusal here is
        // reported the same way, naming the parameter.
        let admission = Admission::with_options(initial, options.policy, options.options, JsClock)
            .map_err(|error| crate::errors::range_error(&error.to_string()))?;
        let reserve = admission.reserve();
        let lifecycle = Lifecycle::new(admission.semaphore().clone());
        let sampler = match options.limit {
            LimitOption::Fixed(_) => None,
            LimitOption::Adaptive(algorithm) => {
                Some(Sampler::new(algorithm, admission.semaphore().clone()))
            }
        };
        Ok(Self {
            admission,
            counters: Rc::new(CallCounters::new(
                options.body_timeout_ms,
                sampler,
                options.default_reserve,
                reserve,
                lifecycle,
            )),
        })
    }

    /// `limiter.setLimit(n)`: a fixed limiter's new limit (an integer from 1
    /// to 1,000,000). Raising it admits queued calls at once; lowering it
    /// never interrupts running calls (no new call is admitted until fewer
    /// than `n` run). An adaptive limiter refuses: its algorithm sets it.
    #[wasm_bindgen(js_name = setLimit)]
    pub fn set_limit(&self, limit: JsValue) -> Result<(), JsValue> {
        if self.counters.sampler.is_some() {
            return Err(type_error(
                "setLimit: this limiter's limit is managed by its adaptive algorithm (options.adaptive); setLimit changes the limit of a limiter made with options.maxInFlight",
            ));
        }
        let limit = checked_limit(&limit)?;
        self.admission.semaphore().set_limit(limit as usize);
        Ok(())
    }

    /// `limiter.onIdle()`: a promise resolving once no call holds a slot
    /// (held bodies and abandoned work included) and none waits; resolved
    /// at once if that is so now.
    #[wasm_bindgen(js_name = onIdle)]
    pub fn on_idle(&self) -> js_sys::Promise {
        self.counters.lifecycle.when_idle()
    }

    /// `limiter.clearQueue()`: every call waiting for a slot now is
    /// rejected with an `OverloadedError` of `reason` `"cleared"`.
    #[wasm_bindgen(js_name = clearQueue)]
    pub fn clear_queue(&self) {
        self.counters.lifecycle.clear_queue();
    }

    /// `limiter.close()`: later calls are rejected at once with an
    /// `OverloadedError` of `reason` `"closed"`; calls running or waiting
    /// now go on. A promise resolving once the last of them has ended (as
    /// `onIdle()`).
    #[wasm_bindgen(js_name = close)]
    pub fn close(&self) -> js_sys::Promise {
        self.counters.lifecycle.close()
    }
}

/// The calls themselves, for Rust callers (the wasm tests); JavaScript
/// reaches them through the `NotInlined` wrappers below.
impl Limiter {
    /// Runs `task` once admitted; see the TypeScript declaration.
    pub fn run(&self, task: JsValue, options: JsValue) -> js_sys::Promise {
        self.counters.bodies.sweep();
        super::call::run(&self.admission, &self.counters, task, options)
    }

    /// `fetch` under the limit, holding the slot until the body is done.
    pub fn fetch(&self, input: JsValue, init: JsValue) -> js_sys::Promise {
        self.counters.bodies.sweep();
        super::call::fetch(&self.admission, &self.counters, input, init)
    }

    /// `{ inFlight, queued, admitted, shed, queueTimeouts, expired,
    /// abandoned, heldBodies, bodyTimeouts, limit, reserve, ceilings, byCriticality,
    /// fairShareRefused, rateLimited, rateOverflow, topRefusedKeys }`, laid
    /// out by `stats.rs`'s one table (made in JavaScript from one array: one
    /// crossing instead of one per field).
    pub fn stats(&self) -> JsValue {
        let bodies = &self.counters.bodies;
        bodies.sweep();
        let stats = self.admission.stats();
        let top_refused = self.admission.top_refused_keys();
        stats_js(&Sources {
            stats: &stats,
            expired: stats
                .expired
                .saturating_add(self.counters.expired_running.get()),
            abandoned: self.counters.abandoned.get(),
            held_bodies: bodies.held_bodies(),
            body_timeouts: bodies.body_timeouts(),
            top_refused: &top_refused,
            reserve: self.admission.reserve(),
        })
    }
}

/// What `run`, `fetch` and `stats` return to JavaScript: always `Ok`.
///
/// A `Result` makes wasm-bindgen return several values from the wasm export,
/// and V8's TurboFan inlines a JS-to-wasm call into its caller only when it
/// returns at most one. Inlined, a call returning one `externref` (a plain
/// `JsValue`) aborts Node.js 20 to 23 (V8 11.3 to 12.9) when the caller's
/// optimized code is deoptimized while the call runs: their deoptimizer has
/// no case for an `externref` result ("Fatal error ... unreachable code" in
/// `Deoptimizer::DoComputeBuiltinContinuation`). `run` and `fetch` call the
/// caller's `fn` or the global `fetch` inside the call, and `stats` fills a
/// fresh object (a counter past 2^30 changes a field's representation): any
/// of them can deoptimize the caller. Reproduced by tests/js/v8-deopt.test.mjs.
/// Measured cost: ~70 ns a call (the second value, and the result's trip
/// through the externref table), benches/node/ab.mjs.
pub type NotInlined<T> = Result<T, JsValue>;

#[wasm_bindgen]
impl Limiter {
    /// `limiter.run(fn, options)`: [`Limiter::run`].
    #[wasm_bindgen(js_name = run)]
    pub fn run_js(&self, task: JsValue, options: JsValue) -> NotInlined<js_sys::Promise> {
        Ok(self.run(task, options))
    }

    /// `limiter.fetch(input, init)`: [`Limiter::fetch`].
    #[wasm_bindgen(js_name = fetch)]
    pub fn fetch_js(&self, input: JsValue, init: JsValue) -> NotInlined<js_sys::Promise> {
        Ok(self.fetch(input, init))
    }

    /// `limiter.stats()`: [`Limiter::stats`].
    #[wasm_bindgen(js_name = stats)]
    pub fn stats_js(&self) -> NotInlined<JsValue> {
        Ok(self.stats())
    }

    /// glue.js's fast start of `run(fn, options)` (`call/free.rs`), with
    /// the options' `callFacts` and key: the id of a free permit held for
    /// it, or -1.
    /// Not part of the API.
    #[wasm_bindgen(js_name = __takeFree)]
    pub fn take_free(&self, facts: f64, key: Option<String>) -> f64 {
        super::call::take_free(&self.admission, &self.counters, facts, key)
    }

    /// The release function of the permits `__takeFree` holds. Not part of
    /// the API.
    #[wasm_bindgen(js_name = __releaseFree)]
    pub fn release_free(&self) -> NotInlined<JsValue> {
        Ok(super::call::release_function(&self.counters))
    }
}
