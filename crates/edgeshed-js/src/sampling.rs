//! The adaptive limit of a `Limiter` (`options.adaptive`): every admitted
//! call is a sample for its [`Controller`], which moves the limit of the
//! limiter's semaphore.
//!
//! How a call counts is the core's one classification ([`Ending::outcome`]);
//! this file only says which [`Ending`] each way of finishing is (the
//! design contract, "Adaptive limits"):
//! * `run`: from admission until `fn` settles. A fulfilment is `Completed`
//!   (served); a rejection is `Status(status)` when it carries a numeric
//!   `status` (503 and 429 are drops), `DeadlinePassed` for a
//!   `DeadlineError` (ignored), else `Completed` (glue.js `endingCode`).
//!   A call cut at its `deadlineMs`, or aborted by its caller, is ignored:
//!   its round trip was cut short outside the origin and says nothing
//!   about the work.
//! * `fetch`: from admission until the response headers: `Status` of the
//!   answer; a network failure is `Failed` (a drop); the `deadlineMs`
//!   passing or the caller's `init.signal` aborting is ignored.
//!
//! Each sample is fed to the algorithm *before* the call's permit is
//! returned, so a lowered limit applies to the very permit coming back.

use crate::host::ending_code;
use core::cell::RefCell;
use edgeshed::limit::adaptive::{AnyLimit, Controller, Ending, Started};
use edgeshed::semaphore::Semaphore;
use edgeshed_wasm::clock::JsClock;
use edgeshed_wasm::held::Lease;
use wasm_bindgen::prelude::*;

/// The [`Ending`] of a call that settled with `value`: a rejection reason,
/// or a fetch's `Response`.
pub(crate) fn ending_of(value: &JsValue) -> Ending {
    let code = ending_code(value);
    if code == -1.0 {
        Ending::DeadlinePassed
    } else if (0.0..=f64::from(u16::MAX)).contains(&code) && code.fract() == 0.0 {
        Ending::Status(code as u16)
    } else {
        Ending::Completed
    }
}

/// The adaptive limit of one `Limiter`.
#[derive(Clone)]
pub(crate) struct Sampler {
    controller: Controller<AnyLimit>,
}

impl core::fmt::Debug for Sampler {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Sampler").finish_non_exhaustive()
    }
}

impl Sampler {
    /// Drives `semaphore`'s limit with `algorithm` (setting it to the
    /// algorithm's initial limit now).
    pub(crate) fn new(algorithm: AnyLimit, semaphore: Semaphore) -> Self {
        Self {
            controller: Controller::new(algorithm, semaphore),
        }
    }

    /// Notes that a call was admitted now (call it holding the permit).
    pub(crate) fn start(&self) -> Started {
        self.controller.start(&JsClock)
    }

    /// Feeds the call admitted at `started`, ending now as `ending`.
    pub(crate) fn finish(&self, started: Started, ending: Ending) {
        self.controller.finish(started, &JsClock, ending.outcome());
    }

    /// Keeps `permit` until JavaScript calls `FINISH` with the returned id
    /// and how the work settled; the call is then sampled (as started at
    /// `started`) and the permit returned.
    fn hold(&self, permit: Lease, started: Started) -> f64 {
        let entry = Entry {
            sampler: self.clone(),
            started,
            permit,
        };
        SAMPLED.with(|sampled| sampled.borrow_mut().insert(entry)) as f64
    }
}

/// A running call whose permit JavaScript returns.
struct Entry {
    sampler: Sampler,
    started: Started,
    permit: Lease,
}

/// Storage for the [`Entry`]s, reusing the slots of finished ones.
struct Slots {
    entries: Vec<Option<Entry>>,
    free: Vec<usize>,
}

impl Slots {
    fn insert(&mut self, entry: Entry) -> usize {
        if let Some(index) = self.free.pop() {
            if let Some(slot) = self.entries.get_mut(index) {
                *slot = Some(entry);
                return index;
            }
        }
        self.entries.push(Some(entry));
        self.entries.len() - 1
    }

    fn remove(&mut self, index: usize) -> Option<Entry> {
        let entry = self.entries.get_mut(index)?.take()?;
        self.free.push(index);
        Some(entry)
    }
}

thread_local! {
    static SAMPLED: RefCell<Slots> = const {
        RefCell::new(Slots {
            entries: Vec::new(),
            free: Vec::new(),
        })
    };
    /// `finish(id, rejected, reason)`: samples the call held under `id`
    /// (its work fulfilled, or rejected with `reason`) and returns its
    /// permit (once; later calls with that id find nothing or, once the
    /// slot is reused, are never made: each id is finished exactly once).
    /// `done(id, how)`: the body of the `fetch` call held under `id` is
    /// done (`how`: edgeshed-wasm's glue.js `BODY_READ` 0, `BODY_FAILED` 1,
    /// `BODY_LEFT` 2): read to its end, the call was served, timed to
    /// then; failed as the origin sent it, a drop; left (cancelled, cut
    /// idle, collected unread), no sample. Its permit is returned (once).
    static BODY_DONE: Closure<dyn FnMut(f64, f64)> = Closure::new(|id: f64, how: f64| {
        let ending = match how as u8 {
            0 => Ending::Completed,
            1 => Ending::Failed,
            _ => Ending::Aborted,
        };
        finish_held(id, ending);
    });
    static FINISH: Closure<dyn FnMut(f64, bool, JsValue)> =
        Closure::new(|id: f64, was_rejected: bool, reason: JsValue| {
            let ending = if was_rejected {
                ending_of(&reason)
            } else {
                Ending::Completed
            };
            finish_held(id, ending);
        });
}

/// Samples the call held under `id` as `ending` and returns its permit
/// (once; later calls with that id find nothing or, once the slot is
/// reused, are never made: each id is finished exactly once).
fn finish_held(id: f64, ending: Ending) {
    if !(id >= 0.0 && id < usize::MAX as f64) {
        return;
    }
    let entry = SAMPLED.with(|sampled| sampled.borrow_mut().remove(id as usize));
    // Outside the borrow: the new limit and the permit may wake tasks.
    if let Some(entry) = entry {
        entry.sampler.finish(entry.started, ending);
        drop(entry.permit);
    }
}

/// An admitted call's permit, and the start of its sample when the
/// limiter is adaptive.
pub(crate) struct Running {
    permit: Lease,
    sample: Option<(Sampler, Started)>,
}

impl Running {
    /// A call admitted now with `permit`; sampled if `sampler` is given.
    pub(crate) fn new(permit: Lease, sampler: Option<&Sampler>) -> Self {
        let sample = sampler.map(|sampler| (sampler.clone(), sampler.start()));
        Self { permit, sample }
    }

    /// The call ends now as `ending()` (not asked for a fixed limit): it is
    /// sampled as the core classifies that, and its permit handed back to
    /// the caller.
    pub(crate) fn sample(self, ending: impl FnOnce() -> Ending) -> Lease {
        if let Some((sampler, started)) = self.sample {
            sampler.finish(started, ending());
        }
        self.permit
    }

    /// Hands a served `fetch` call to its response body: `f(id, release)`,
    /// where the body holder calls `release(id, how)` once when the body is
    /// done; that samples the call as the body ended (timed to its end, the
    /// span its permit is held) and returns the permit.
    pub(crate) fn hand_over_body<T>(self, f: impl FnOnce(f64, &JsValue) -> T) -> T {
        self.hand_over_as(true, f)
    }

    /// Hands the call to JavaScript: `f(id, release)`, where JavaScript
    /// calls `release(id, rejected, reason)` once when the work settles;
    /// that samples the call and returns the permit.
    pub(crate) fn hand_over<T>(self, f: impl FnOnce(f64, &JsValue) -> T) -> T {
        self.hand_over_as(false, f)
    }

    /// The `release` that [`hand_over`](Self::hand_over) gives a call of a
    /// limiter with (`sampled`) or without an adaptive limit.
    pub(crate) fn release_function(sampled: bool) -> JsValue {
        if sampled {
            FINISH.with(|finish| finish.as_ref().clone())
        } else {
            edgeshed_wasm::held::with_release(JsValue::clone)
        }
    }

    /// [`hand_over`](Self::hand_over), or with `body` [`hand_over_body`](Self::hand_over_body).
    fn hand_over_as<T>(self, body: bool, f: impl FnOnce(f64, &JsValue) -> T) -> T {
        let Some((sampler, started)) = self.sample else {
            let id = edgeshed_wasm::held::hold(self.permit);
            return edgeshed_wasm::held::with_release(|release| f(id, release));
        };
        let id = sampler.hold(self.permit, started);
        if body {
            BODY_DONE.with(|done| f(id, done.as_ref()))
        } else {
            FINISH.with(|finish| f(id, finish.as_ref()))
        }
    }
}
