//! Per-`Limiter` state that only the JS face keeps (the core's `Admission`
//! counts admission itself): calls abandoned by their caller while still
//! running, deadlines that passed after admission, the `fetch` bodies
//! holding slots, the adaptive limit's sampler, and the default reserve
//! until a call names its criticality.

use crate::bodies::Bodies;
use crate::lifecycle::{lease, Lifecycle};
use crate::options::CallOptions;
use crate::sampling::Sampler;
use core::cell::Cell;
use edgeshed::admission::{Admission, Reserve};
use edgeshed::semaphore::Permit;
use edgeshed_wasm::clock::JsClock;
use edgeshed_wasm::held::Lease;
use std::rc::Rc;

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
    /// `onIdle()`, `clearQueue()` and `close()`.
    pub(crate) lifecycle: Rc<Lifecycle>,
    /// The default reserve, until the first call that names its criticality
    /// installs it; `None` once installed, or when `options.reserve` was
    /// given. A limiter whose calls never name a criticality keeps no
    /// reserve: its calls, all of one criticality, use the whole limit.
    pending_reserve: Cell<Option<Reserve>>,
    /// The reserve in effect (what the errors' messages tell), kept here so
    /// that a refusal need not ask the semaphore (a lock) for it.
    reserve: Cell<Reserve>,
}

impl CallCounters {
    /// Counters of a limiter whose bodies may sit idle for
    /// `body_timeout_ms`, with its adaptive limit if it has one.
    /// With `default_reserve`, the default reserve waits for the first call
    /// that names its criticality ([`reserve_for`](Self::reserve_for)).
    /// `reserve` is the one given in the options (`Reserve::NONE` if none).
    pub(crate) fn new(
        body_timeout_ms: u32,
        sampler: Option<Sampler>,
        default_reserve: bool,
        reserve: Reserve,
        lifecycle: Rc<Lifecycle>,
    ) -> Self {
        Self {
            lifecycle,
            reserve: Cell::new(reserve),
            abandoned: Cell::new(0),
            expired_running: Cell::new(0),
            bodies: Bodies::new(body_timeout_ms),
            sampler,
            pending_reserve: Cell::new(default_reserve.then(Reserve::default)),
        }
    }

    /// The reserve in effect for a call with `options`: if it names its
    /// criticality, the default reserve is installed on `admission` first
    /// (when still pending).
    #[inline]
    pub(crate) fn reserve_for(
        &self,
        options: &CallOptions,
        admission: &Admission<JsClock>,
    ) -> Reserve {
        if options.classified {
            if let Some(reserve) = self.pending_reserve.take() {
                admission.set_reserve(reserve);
                self.reserve.set(reserve);
            }
        }
        self.reserve.get()
    }

    /// An admitted call's `permit`, telling the lifecycle when it is back.
    pub(crate) fn lease(&self, permit: Permit) -> Lease {
        lease(&self.lifecycle, permit)
    }

    /// Adds one to `counter`.
    pub(crate) fn bump(counter: &Cell<u64>) {
        counter.set(counter.get().saturating_add(1));
    }
}
