//! The readiness probe: how a [`LoadShed`](super::LoadShed) asks the service
//! right inside it to say "not ready" without parking anything.
//!
//! Without the probe, a pending inner readiness may have left a waiter in a
//! queue, and `LoadShed` can only withdraw it by replacing the inner service
//! with a clone (a queue entry made and removed, an `Arc` count up and down,
//! per rejection). edgeshed's own limits answer the probe instead: when they
//! would queue, they return `Pending` with nothing registered and say so here.
//!
//! tower's `Service` trait has no room for the question, so it travels beside
//! the call, in a thread-local slot that lives for one `poll_ready`: the
//! `LoadShed` writes the address and size of its inner service, and only the
//! service at exactly that address and of exactly that size may answer. A
//! service nested deeper (behind a wrapper that could hold state of its own,
//! such as a permit reserved before polling its inner service) never matches,
//! so `LoadShed` falls back to the clone. A wrapper whose other fields are all
//! zero-sized holds no state and may pass the question through unchanged.

use core::cell::Cell;

/// What the slot holds while a `LoadShed` polls its inner service.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// No question asked on this thread.
    Idle,
    /// The service at this address, of this size, may answer.
    Asked { address: usize, size: usize },
    /// It answered: its `Pending` left nothing parked.
    Answered,
}

std::thread_local! {
    static SLOT: Cell<Slot> = const { Cell::new(Slot::Idle) };
}

fn key<T>(service: &T) -> Slot {
    Slot::Asked {
        address: core::ptr::from_ref(service).addr(),
        size: core::mem::size_of::<T>(),
    }
}

/// Restores the slot as it was, also when the poll unwinds (a stale question
/// must never reach a later poll of a service that happens to sit at the same
/// address).
struct Restore(Slot);

impl Drop for Restore {
    fn drop(&mut self) {
        SLOT.with(|slot| slot.set(self.0));
    }
}

/// Runs `poll` on `inner` with the probe asked; also returns whether `inner`
/// answered it (its `Pending`, if any, parked nothing).
#[inline]
pub(crate) fn ask<S, R>(inner: &mut S, poll: impl FnOnce(&mut S) -> R) -> (R, bool) {
    let restore = Restore(SLOT.with(|slot| slot.replace(key(&*inner))));
    let outcome = poll(inner);
    let answered = SLOT.with(|slot| slot.get()) == Slot::Answered;
    drop(restore);
    (outcome, answered)
}

/// For a limit about to park a waiter: `true` (and the answer recorded) when
/// the `LoadShed` right outside `service` asked the probe and `would_queue()`
/// confirms that the limit would only park a waiter (no refusal to report);
/// the limit then returns `Pending` without parking anything.
#[inline]
pub(crate) fn answer<T>(service: &T, would_queue: impl FnOnce() -> bool) -> bool {
    SLOT.with(|slot| {
        let answered = slot.get() == key(service) && would_queue();
        if answered {
            slot.set(Slot::Answered);
        }
        answered
    })
}
