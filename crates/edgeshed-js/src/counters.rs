//! Per-`Limiter` state that only the JS face keeps (the core's `Admission`
//! counts admission itself): calls abandoned by their caller while still
//! running, deadlines that passed after admission, the `fetch` bodies
//! holding slots, and the adaptive limit's sampler.

use crate::bodies::Bodies;
use crate::sampling::Sampler;
use core::cell::Cell;

/// Per-`Limiter` counters, shared by its calls.
#[derive(Debug)]
pub(crate) struct CallCounters {
    /// Calls whose caller was rejected (deadline, abort) while the work
    /// still ran; their slot was freed only when the work settled.
    pub(crate) abandoned: Cell<u64>,
    /// Calls rejected at their deadline after admission (the core counts
    /// those rejected while queued).
    pub(crate) expired_running: Cell<u64>,
    /// The response bodies holding slots: `bodyTimeoutMs`, `heldBodies` and
    /// `bodyTimeouts`, counted in JavaScript where the bodies are.
    pub(crate) bodies: Bodies,
    /// The adaptive limit (`options.adaptive`) fed by every call; `None`
    /// for a fixed limit (`options.maxInFlight`).
    pub(crate) sampler: Option<Sampler>,
}

impl CallCounters {
    /// Counters of a limiter whose bodies may sit idle for
    /// `body_timeout_ms`, with its adaptive limit if it has one.
    pub(crate) fn new(body_timeout_ms: u32, sampler: Option<Sampler>) -> Self {
        Self {
            abandoned: Cell::new(0),
            expired_running: Cell::new(0),
            bodies: Bodies::new(body_timeout_ms),
            sampler,
        }
    }

    /// Adds one to `counter`.
    pub(crate) fn bump(counter: &Cell<u64>) {
        counter.set(counter.get().saturating_add(1));
    }
}
