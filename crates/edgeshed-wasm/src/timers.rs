//! [`Timers`]: the registry of armed sleeps and the host timers that fire
//! them — one host timer per sleep in workerd, one shared timer (earliest
//! deadline first) elsewhere. It owns its state; `sleep.rs` wires it to the
//! JavaScript host and only calls its methods.

use crate::host::{Callback, Platform};
use crate::id_map::Registry;
use core::cmp::Reverse;
use core::task::{Poll, Waker};
use std::collections::BinaryHeap;

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;

/// A deadline in ms as a totally ordered key (non-negative `f64`s order
/// like their bit patterns).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Due(u64);

impl Due {
    fn at(millis: f64) -> Self {
        Self(millis.max(0.0).to_bits())
    }

    fn millis(self) -> f64 {
        f64::from_bits(self.0)
    }
}

/// One sleep's state in the registry.
struct Timer<T> {
    /// The waker the sleep was last polled with: a timer wakes whoever
    /// polls it, never a task found some other way.
    waker: Option<Waker>,
    fired: bool,
    /// Its own host timer, or `None` when it waits in the shared queue.
    own: Option<T>,
}

impl<T> Timer<T> {
    /// Marks it fired; returns whom to wake, unless it had fired already.
    fn fire(&mut self) -> Option<Waker> {
        if self.fired {
            return None;
        }
        self.fired = true;
        self.waker.take()
    }
}

/// The armed sleeps and the host timers that fire them.
pub(crate) struct Timers<P: Platform> {
    platform: P,
    /// Every sleep that has been armed and not cancelled yet.
    armed: Registry<Timer<P::Timer>>,
    /// Sleeps served by the shared host timer, earliest first. A sleep
    /// cancelled early stays in the heap until it surfaces (or the heap is
    /// compacted): only ids still in `armed` count.
    queue: BinaryHeap<Reverse<(Due, u64)>>,
    /// How many sleeps in `queue` are still armed.
    queued: usize,
    /// The shared host timer, and the deadline it is set for.
    shared: Option<(Due, P::Timer)>,
}

impl<P: Platform> Timers<P> {
    /// No sleeps yet, on `platform`.
    pub(crate) fn new(platform: P) -> Self {
        Self {
            platform,
            armed: Registry::default(),
            queue: BinaryHeap::new(),
            queued: 0,
            shared: None,
        }
    }

    /// The host (tests drive the fake one's clock through it).
    #[cfg(all(test, not(target_arch = "wasm32")))]
    pub(crate) fn platform(&self) -> &P {
        &self.platform
    }

    /// Arms a sleep until `deadline_ms` that wakes `waker`: with a host timer
    /// of its own (`own_timer`, workerd) or in the shared queue. `None` if
    /// the host refused a timer.
    pub(crate) fn arm(&mut self, deadline_ms: f64, waker: &Waker, own_timer: bool) -> Option<u64> {
        let timer = Timer {
            waker: Some(waker.clone()),
            fired: false,
            own: None,
        };
        if own_timer {
            let id = self.armed.insert(timer);
            let delay = self.delay_until(deadline_ms);
            let Some(handle) = self.platform.set_timeout(Callback::Fire, delay, id) else {
                self.armed.remove(id);
                return None;
            };
            if let Some(timer) = self.armed.get_mut(id) {
                timer.own = Some(handle);
            }
            return Some(id);
        }
        let due = Due::at(deadline_ms);
        let earliest = self.shared.as_ref().is_none_or(|(at, _)| due < *at);
        if earliest && !self.arm_shared(due) {
            return None;
        }
        let id = self.armed.insert(timer);
        self.queue.push(Reverse((due, id)));
        self.queued += 1;
        Some(id)
    }

    /// `Ready` once sleep `id` has fired (or is unknown); else `waker` is
    /// the one it will wake.
    pub(crate) fn poll(&mut self, id: u64, waker: &Waker) -> Poll<()> {
        let Some(timer) = self.armed.get_mut(id) else {
            return Poll::Ready(());
        };
        if timer.fired {
            return Poll::Ready(());
        }
        match &timer.waker {
            Some(old) if old.will_wake(waker) => {}
            _ => timer.waker = Some(waker.clone()),
        }
        Poll::Pending
    }

    /// Forgets sleep `id`, clearing the host timers nobody needs any more.
    /// Returns its waker, for the caller to drop outside any borrow (it may
    /// hold the last reference to a task).
    pub(crate) fn cancel(&mut self, id: u64) -> Option<Waker> {
        let Timer { waker, fired, own } = self.armed.remove(id)?;
        if fired {
            return waker;
        }
        if let Some(handle) = own {
            self.platform.clear_timeout(&handle);
            return waker;
        }
        self.queued = self.queued.saturating_sub(1);
        if self.queued == 0 {
            // The last queued sleep gone: do not keep the host (a Node
            // process) waiting on a timer nobody needs.
            self.queue.clear();
            if let Some((_, handle)) = self.shared.take() {
                self.platform.clear_timeout(&handle);
            }
        } else if self.queue.len() > 2 * self.queued + 64 {
            // Mostly sleeps cancelled early: keep memory bounded.
            let armed = &self.armed;
            self.queue
                .retain(|Reverse((_, id))| armed.get(*id).is_some_and(|t| !t.fired));
        }
        waker
    }

    /// The own host timer of sleep `id` fired: returns whom to wake.
    pub(crate) fn fire(&mut self, id: u64) -> Option<Waker> {
        self.armed.get_mut(id)?.fire()
    }

    /// The shared host timer fired: fires every queued sleep that is due,
    /// re-arms for the next, and returns whom to wake.
    pub(crate) fn fire_queue(&mut self) -> Vec<Waker> {
        let now = Due::at(self.platform.now_ms());
        self.shared = None;
        let mut due = Vec::new();
        while let Some(&Reverse((at, id))) = self.queue.peek() {
            let live = self.armed.contains(id);
            if live && at > now {
                break;
            }
            self.queue.pop();
            if let Some(waker) = self.armed.get_mut(id).and_then(Timer::fire) {
                self.queued = self.queued.saturating_sub(1);
                due.push(waker);
            }
        }
        if let Some(&Reverse((next, _))) = self.queue.peek() {
            if !self.arm_shared(next) {
                // No timer for the rest: they end now (better early than never).
                for Reverse((_, id)) in core::mem::take(&mut self.queue) {
                    if let Some(waker) = self.armed.get_mut(id).and_then(Timer::fire) {
                        due.push(waker);
                    }
                }
                self.queued = 0;
            }
        }
        due
    }

    /// Sets the shared host timer for `due`, replacing an earlier setting;
    /// `false` if the host refused a timer.
    fn arm_shared(&mut self, due: Due) -> bool {
        if let Some((_, handle)) = self.shared.take() {
            self.platform.clear_timeout(&handle);
        }
        let delay = self.delay_until(due.millis());
        match self.platform.set_timeout(Callback::FireQueue, delay, 0) {
            Some(handle) => {
                self.shared = Some((due, handle));
                true
            }
            None => false,
        }
    }

    /// The delay to `deadline_ms`: `setTimeout`'s delay is a signed 32-bit
    /// millisecond count.
    fn delay_until(&self, deadline_ms: f64) -> f64 {
        (deadline_ms - self.platform.now_ms())
            .ceil()
            .clamp(0.0, 2_147_483_647.0)
    }
}
