//! The adaptive limit of a `Limiter` (`options.adaptive`): every admitted
//! call is a sample for its [`Controller`], which moves the limit of the
//! limiter's semaphore.
//!
//! What is sampled (the contract: DESIGN.md "JS API"):
//! * `run`: from admission until `fn` settles. A drop is a rejection whose
//!   `status` is 503 or 429, or a `DeadlineError` (glue.js `isDrop`). A call
//!   rejected at its `deadlineMs` while running is sampled at the deadline,
//!   as a drop. A call whose caller aborted it is not sampled at all: its
//!   round trip was cut short by the caller and says nothing about the work.
//! * `fetch`: from admission until the response headers. A drop is a 503 or
//!   429 answer, a network failure or the `deadlineMs` passing; a fetch
//!   aborted through the caller's `init.signal` is not sampled.
//!
//! Each sample is fed to the algorithm *before* the call's permit is
//! returned, so a lowered limit applies to the very permit coming back.

use core::cell::RefCell;
use edgeshed::limit::adaptive::{AnyLimit, Controller, Started};
use edgeshed::semaphore::{Permit, Semaphore};
use edgeshed::time::Clock;
use edgeshed_wasm::clock::JsClock;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/glue.js")]
extern "C" {
    /// Whether a call's outcome is a drop: a value (a rejection reason or a
    /// `Response`) whose `status` is 503 or 429, or a `DeadlineError`.
    /// Never throws (a throwing getter counts as no drop).
    #[wasm_bindgen(js_name = isDrop)]
    pub(crate) fn is_drop(value: &JsValue) -> bool;
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
        self.controller.start(JsClock.now())
    }

    /// Feeds the call admitted at `started` to the algorithm, ending now.
    pub(crate) fn finish(&self, started: Started, dropped: bool) {
        self.controller.finish(started, JsClock.now(), dropped);
    }

    /// Keeps `permit` until JavaScript calls `FINISH` with the returned id
    /// and whether the call was dropped; the call is then sampled (as
    /// started at `started`) and the permit returned.
    fn hold(&self, permit: Permit, started: Started) -> f64 {
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
    permit: Permit,
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
    /// `finish(id, dropped)`: samples the call held under `id` and returns
    /// its permit (once; later calls with that id find nothing or, once the
    /// slot is reused, are never made: each id is finished exactly once).
    static FINISH: Closure<dyn FnMut(f64, bool)> = Closure::new(|id: f64, dropped: bool| {
        if !(id >= 0.0 && id < usize::MAX as f64) {
            return;
        }
        let entry = SAMPLED.with(|sampled| sampled.borrow_mut().remove(id as usize));
        // Outside the borrow: the new limit and the permit may wake tasks.
        if let Some(entry) = entry {
            entry.sampler.finish(entry.started, dropped);
            drop(entry.permit);
        }
    });
}

/// An admitted call's permit, and the start of its sample when the
/// limiter is adaptive.
pub(crate) struct Running {
    permit: Permit,
    sample: Option<(Sampler, Started)>,
}

impl Running {
    /// A call admitted now with `permit`; sampled if `sampler` is given.
    pub(crate) fn new(permit: Permit, sampler: Option<&Sampler>) -> Self {
        let sample = sampler.map(|sampler| (sampler.clone(), sampler.start()));
        Self { permit, sample }
    }

    /// The call ends now: sampled (a drop if `dropped()` says so; not asked
    /// for a fixed limit), and its permit handed back to the caller.
    pub(crate) fn sample(self, dropped: impl FnOnce() -> bool) -> Permit {
        if let Some((sampler, started)) = self.sample {
            sampler.finish(started, dropped());
        }
        self.permit
    }

    /// The permit, without sampling the call (its caller aborted it).
    pub(crate) fn unsampled(self) -> Permit {
        self.permit
    }

    /// Hands the call to JavaScript: `f(id, release)`, where JavaScript
    /// calls `release(id, dropped)` once when the work settles (`dropped`
    /// as `isDrop` says); that samples the call and returns the permit.
    pub(crate) fn hand_over<T>(self, f: impl FnOnce(f64, &JsValue) -> T) -> T {
        match self.sample {
            None => {
                let id = edgeshed_wasm::held::hold(self.permit);
                edgeshed_wasm::held::with_release(|release| f(id, release))
            }
            Some((sampler, started)) => {
                let id = sampler.hold(self.permit, started);
                FINISH.with(|finish| f(id, finish.as_ref()))
            }
        }
    }
}
