//! A JavaScript promise's outcome as a future, with no closure per promise.
//!
//! `wasm_bindgen_futures::JsFuture` makes two wasm-bindgen closures for every
//! promise it awaits; a queued `Limiter.run` awaits one per call. Here every
//! promise reports to one long-lived callback with a slot id, and the
//! future reads its slot.

use crate::host::js::watch_settled;
use crate::id_map::{id_from_js, id_to_js, Registry};
use core::cell::RefCell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use wasm_bindgen::prelude::*;

/// One awaited promise: its outcome once settled, and who waits for it.
#[derive(Default)]
struct Slot {
    outcome: Option<Result<JsValue, JsValue>>,
    waker: Option<Waker>,
}

thread_local! {
    static SLOTS: RefCell<Registry<Slot>> = RefCell::new(Registry::default());
    static ON_SETTLED: Closure<dyn FnMut(f64, bool, JsValue)> =
        Closure::new(|id: f64, fulfilled: bool, value: JsValue| {
            let Some(id) = id_from_js(id) else { return };
            let waker = SLOTS.with(|slots| {
                // A future dropped before its promise settled left no slot.
                let mut slots = slots.borrow_mut();
                let slot = slots.get_mut(id)?;
                slot.outcome = Some(if fulfilled { Ok(value) } else { Err(value) });
                slot.waker.take()
            });
            if let Some(waker) = waker {
                waker.wake();
            }
        });
}

/// Resolves with `Ok(value)` when the promise (or thenable, or plain value)
/// fulfils, `Err(reason)` when it rejects.
#[must_use = "futures do nothing unless polled"]
pub struct Settled {
    id: u64,
}

impl Settled {
    /// Starts watching `value` (adopted as by `Promise.resolve`).
    pub fn new(value: impl AsRef<JsValue>) -> Self {
        let id = SLOTS.with(|slots| slots.borrow_mut().insert(Slot::default()));
        ON_SETTLED.with(|on_settled| {
            watch_settled(value.as_ref(), id_to_js(id), on_settled.as_ref());
        });
        Self { id }
    }
}

impl Future for Settled {
    type Output = Result<JsValue, JsValue>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        SLOTS.with(|slots| {
            let mut slots = slots.borrow_mut();
            let Some(slot) = slots.get_mut(self.id) else {
                // Polled after it completed: nothing more will come.
                return Poll::Pending;
            };
            if let Some(outcome) = slot.outcome.take() {
                // The slot's old waker goes with it (a clone of ours: its
                // drop wakes nobody).
                slots.remove(self.id);
                return Poll::Ready(outcome);
            }
            match &slot.waker {
                Some(waker) if waker.will_wake(cx.waker()) => {}
                _ => slot.waker = Some(cx.waker().clone()),
            }
            Poll::Pending
        })
    }
}

impl Drop for Settled {
    fn drop(&mut self) {
        let slot = SLOTS.with(|slots| slots.borrow_mut().remove(self.id));
        // Dropped outside the borrow: the outcome may hold anything.
        drop(slot);
    }
}
