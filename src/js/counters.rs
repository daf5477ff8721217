//! Counters that only the JS face keeps (the core's `Admission` counts
//! admission itself): calls abandoned by their caller while still running,
//! and slots held by `fetch` response bodies.

use core::cell::Cell;

/// Per-`Limiter` counters, shared by its calls.
#[derive(Debug, Default)]
#[allow(dead_code)] // the body counters are wired by the `bodyTimeoutMs` work
pub(crate) struct CallCounters {
    /// Calls whose caller was rejected (deadline, abort) while the work
    /// still ran; their slot was freed only when the work settled.
    pub(crate) abandoned: Cell<u64>,
    /// Calls rejected at their deadline after admission (the core counts
    /// those rejected while queued).
    pub(crate) expired_running: Cell<u64>,
    /// Slots held by response bodies right now.
    pub(crate) held_bodies: Cell<u64>,
    /// Bodies cancelled because they sat unread for `bodyTimeoutMs`.
    pub(crate) body_timeouts: Cell<u64>,
}

impl CallCounters {
    /// Adds one to `counter`.
    pub(crate) fn bump(counter: &Cell<u64>) {
        counter.set(counter.get().saturating_add(1));
    }
}
