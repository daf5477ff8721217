use core::cell::RefCell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

/// Resolves with the signal's reason once an `AbortSignal` aborts.
///
/// Its `abort` listener is removed when it is dropped, so a long-lived
/// signal does not accumulate listeners.
pub(crate) struct Aborted {
    signal: AbortSignal,
    waker: Rc<RefCell<Option<Waker>>>,
    listener: Closure<dyn FnMut()>,
}

impl Aborted {
    pub(crate) fn new(signal: AbortSignal) -> Self {
        let waker: Rc<RefCell<Option<Waker>>> = Rc::default();
        let to_wake = Rc::clone(&waker);
        let listener = Closure::<dyn FnMut()>::new(move || {
            if let Some(waker) = to_wake.borrow_mut().take() {
                waker.wake();
            }
        });
        let _ = signal.add_event_listener_with_callback("abort", listener.as_ref().unchecked_ref());
        Self {
            signal,
            waker,
            listener,
        }
    }
}

impl Future for Aborted {
    type Output = JsValue;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<JsValue> {
        if self.signal.aborted() {
            return Poll::Ready(self.signal.reason());
        }
        *self.waker.borrow_mut() = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for Aborted {
    fn drop(&mut self) {
        let _ = self
            .signal
            .remove_event_listener_with_callback("abort", self.listener.as_ref().unchecked_ref());
    }
}
