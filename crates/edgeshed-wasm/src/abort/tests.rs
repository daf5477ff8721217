//! `unless_aborted`: the output when the future wins, the reason when the
//! signal does, also for a signal that aborted before the first poll.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::unless_aborted;
use core::cell::Cell;
use std::rc::Rc;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;
use web_sys::AbortController;

/// Sets its flag when dropped (the route future's permits, in the gateway).
struct Dropped(Rc<Cell<bool>>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.set(true);
    }
}

#[wasm_bindgen_test]
async fn a_future_ready_at_once_wins_even_over_an_aborted_signal() {
    let controller = AbortController::new().unwrap();
    controller.abort();
    let out = unless_aborted(async { 7 }, controller.signal()).await;
    assert_eq!(out.unwrap(), 7);
}

#[wasm_bindgen_test]
async fn a_signal_aborted_before_the_first_poll_ends_a_waiting_future() {
    let controller = AbortController::new().unwrap();
    controller.abort_with_reason(&JsValue::from_str("gone"));
    let out = unless_aborted(futures_util::future::pending::<()>(), controller.signal()).await;
    assert_eq!(out.unwrap_err(), "gone");
}

#[wasm_bindgen_test]
async fn an_abort_while_the_future_waits_drops_it_and_gives_the_reason() {
    let controller = AbortController::new().unwrap();
    let dropped = Rc::new(Cell::new(false));
    let guard = Dropped(Rc::clone(&dropped));
    let waiting = async move {
        let _guard = guard;
        // Waits on a promise that never settles.
        JsFuture::from(js_sys::Promise::new(&mut |_, _| {})).await
    };
    let abort_later = {
        let controller = controller.clone();
        async move {
            // One turn later, so the future has waited (and the watch is set).
            JsFuture::from(js_sys::Promise::resolve(&JsValue::NULL))
                .await
                .unwrap();
            controller.abort_with_reason(&JsValue::from_str("client left"));
        }
    };
    let (out, ()) =
        futures_util::future::join(unless_aborted(waiting, controller.signal()), abort_later).await;
    assert_eq!(out.unwrap_err(), "client left");
    assert!(dropped.get(), "the waiting future was dropped");
}
