//! `reclaim_expired`: a task past twice its lifetime is dropped (and with it
//! what it holds), and the scan it skips while nothing can be due never
//! skips a task that is.

use super::super::{live_tasks, reclaim_expired, spawn_for_request};
use super::{deferred, next_macrotask};
use core::cell::Cell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

/// Sets its flag when dropped: stands in for the permits a task holds.
struct Held(Rc<Cell<bool>>);

impl Drop for Held {
    fn drop(&mut self) {
        self.0.set(true);
    }
}

/// A task of `lifetime_ms` that holds a `Held` until `gate` resolves
/// (never, for `None`); returns the flag its drop sets.
fn holding_task(lifetime_ms: f64, gate: Option<js_sys::Promise>) -> Rc<Cell<bool>> {
    let dropped = Rc::new(Cell::new(false));
    let held = Held(Rc::clone(&dropped));
    let _spawned = spawn_for_request(
        async move {
            let _held = held;
            match gate {
                Some(gate) => JsFuture::from(gate).await,
                None => futures_util::future::pending().await,
            }
        },
        Some(lifetime_ms),
        None,
    );
    dropped
}

#[wasm_bindgen_test]
fn a_task_past_its_lifetime_is_reclaimed_and_drops_what_it_holds() {
    // Lifetime 0: expired as soon as it is spawned (and polled: pending).
    let dropped = holding_task(0.0, None);
    assert!(!dropped.get());
    let live = live_tasks();
    assert!(reclaim_expired() >= 1);
    assert!(dropped.get(), "its permits went back");
    assert!(live_tasks() < live);
}

#[wasm_bindgen_test]
async fn a_task_spawned_after_a_scan_that_found_nothing_due_is_still_reclaimed() {
    let gate = deferred();
    let promise: js_sys::Promise = js_sys::Reflect::get(&gate, &"promise".into())
        .unwrap()
        .into();
    // A long-lived task: the scan finds nothing due and remembers its expiry.
    let long_lived = holding_task(1.0e9, Some(promise));
    reclaim_expired();
    assert_eq!(reclaim_expired(), 0, "nothing is due");
    // A task expiring earlier than anything seen so far must lower that bound.
    let short_lived = holding_task(0.0, None);
    assert_eq!(reclaim_expired(), 1);
    assert!(
        short_lived.get(),
        "the task spawned after the scan was reclaimed"
    );
    assert!(!long_lived.get(), "the task not yet due was left alone");
    // Let the long-lived task finish, so no other test sees it.
    let resolve: js_sys::Function = js_sys::Reflect::get(&gate, &"resolve".into())
        .unwrap()
        .into();
    resolve.call0(&JsValue::UNDEFINED).unwrap();
    JsFuture::from(next_macrotask()).await.unwrap();
    assert!(long_lived.get(), "it ended on its own");
}
