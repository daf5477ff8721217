//! A fake host for native unit tests: a manual clock and timers that fire
//! only when the test advances it.

use super::{Callback, Platform};
use core::cell::{Cell, RefCell};

/// A pending fake timer.
#[derive(Clone, Copy)]
struct Pending {
    handle: u64,
    at: f64,
    callback: Callback,
    id: u64,
}

/// A manual clock (starting at 0 ms) and the timers set on it.
#[derive(Default)]
pub(crate) struct FakePlatform {
    now: Cell<f64>,
    next_handle: Cell<u64>,
    pending: RefCell<Vec<Pending>>,
    /// While set, every `set_timeout` is refused.
    pub(crate) refuse: Cell<bool>,
}

impl FakePlatform {
    /// Moves the clock to `ms` and returns the timers now due (removed, in
    /// the order they are due), for the test to deliver.
    pub(crate) fn advance_to(&self, ms: f64) -> Vec<(Callback, u64)> {
        self.now.set(ms);
        let mut pending = self.pending.borrow_mut();
        let mut due: Vec<Pending> = Vec::new();
        pending.retain(|timer| {
            if timer.at <= ms {
                due.push(*timer);
                false
            } else {
                true
            }
        });
        due.sort_by(|a, b| a.at.total_cmp(&b.at));
        due.into_iter().map(|t| (t.callback, t.id)).collect()
    }

    /// Host timers still pending.
    pub(crate) fn pending(&self) -> usize {
        self.pending.borrow().len()
    }
}

impl Platform for FakePlatform {
    type Timer = u64;

    fn now_ms(&self) -> f64 {
        self.now.get()
    }

    fn set_timeout(&self, callback: Callback, delay_ms: f64, id: u64) -> Option<u64> {
        if self.refuse.get() {
            return None;
        }
        let handle = self.next_handle.get() + 1;
        self.next_handle.set(handle);
        let at = self.now.get() + delay_ms;
        self.pending.borrow_mut().push(Pending {
            handle,
            at,
            callback,
            id,
        });
        Some(handle)
    }

    fn clear_timeout(&self, timer: &u64) {
        self.pending.borrow_mut().retain(|t| t.handle != *timer);
    }
}
