//! An `AbortSignal` as a future, read once and then only listened to.

pub use crate::host::js::abort_reason;
use crate::host::js::{off_abort, on_abort};
use core::cell::RefCell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

/// What the abort listener shares with the future.
#[derive(Default)]
struct Watch {
    /// `{ reason }` once the signal has aborted.
    aborted: Option<JsValue>,
    waker: Option<Waker>,
}

/// Resolves with the signal's reason once an `AbortSignal` aborts.
///
/// The signal is read once, when this is made; after that only its `abort`
/// event is observed. Polling never touches the signal: in workerd a
/// request's signal may not be read from another request's turn (it throws),
/// and an exception must never unwind through a poll. The listener is
/// removed when this is dropped, so a long-lived signal does not accumulate
/// listeners.
pub struct Aborted {
    signal: AbortSignal,
    watch: Rc<RefCell<Watch>>,
    listener: Option<Listener>,
}

/// The `abort` listener as registered, and the Rust callback it calls.
struct Listener {
    registered: JsValue,
    _callback: Closure<dyn FnMut(JsValue)>,
}

impl Aborted {
    /// Watches `signal`: ready with its reason once it aborts (at once if it
    /// has already).
    pub fn new(signal: AbortSignal) -> Self {
        let watch: Rc<RefCell<Watch>> = Rc::default();
        let already = abort_reason(&signal);
        if !already.is_undefined() {
            watch.borrow_mut().aborted = Some(already);
            return Self {
                signal,
                watch,
                listener: None,
            };
        }
        let to_wake = Rc::clone(&watch);
        let callback = Closure::<dyn FnMut(JsValue)>::new(move |aborted: JsValue| {
            let waker = {
                let mut watch = to_wake.borrow_mut();
                watch.aborted = Some(aborted);
                watch.waker.take()
            };
            if let Some(waker) = waker {
                waker.wake();
            }
        });
        let listener = on_abort(&signal, callback.as_ref());
        Self {
            signal,
            watch,
            listener: Some(Listener {
                registered: listener,
                _callback: callback,
            }),
        }
    }
}

impl Future for Aborted {
    type Output = JsValue;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<JsValue> {
        let mut watch = self.watch.borrow_mut();
        if let Some(aborted) = &watch.aborted {
            let reason = js_sys::Reflect::get(aborted, &"reason".into()).unwrap_or_default();
            return Poll::Ready(reason);
        }
        match &watch.waker {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            _ => watch.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

impl Drop for Aborted {
    fn drop(&mut self) {
        if let Some(listener) = self.listener.take() {
            off_abort(&self.signal, &listener.registered);
        }
    }
}

#[cfg(all(test, target_arch = "wasm32"))]
mod tests;

/// Runs `future` until it completes (`Ok`) or `signal` aborts (`Err` with the
/// reason), like a `select` of the two, except that the signal is only read
/// and watched once `future` first has to wait.
///
/// A future that completes in its first poll (a request answered at once,
/// such as a shed one) never costs a listener: registering and removing one
/// was about 6 % of the gateway's CPU on its shed path (benches/e2e/profile.mjs).
/// An abort that happened before the first poll is still seen by the
/// watch made after it, since [`Aborted::new`] reads the signal first.
pub async fn unless_aborted<F: Future>(
    future: F,
    signal: AbortSignal,
) -> Result<F::Output, JsValue> {
    let mut future = core::pin::pin!(future);
    let mut signal = Some(signal);
    let mut watch: Option<Aborted> = None;
    core::future::poll_fn(move |cx| {
        if let Poll::Ready(output) = future.as_mut().poll(cx) {
            return Poll::Ready(Ok(output));
        }
        let watch = match (&mut watch, signal.take()) {
            (Some(watch), _) => watch,
            (slot, Some(signal)) => slot.insert(Aborted::new(signal)),
            (None, None) => return Poll::Pending,
        };
        Pin::new(watch).poll(cx).map(Err)
    })
    .await
}
