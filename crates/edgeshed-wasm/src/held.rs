//! Permits held on behalf of JavaScript until it calls back, with one
//! shared release callback instead of a wasm-bindgen closure per permit.

use crate::id_map::{id_from_js, id_to_js, Registry};
use core::cell::RefCell;
use edgeshed::semaphore::Permit;
use wasm_bindgen::prelude::*;

thread_local! {
    static HELD: RefCell<Registry<Permit>> = RefCell::new(Registry::default());
    /// `release(id)`: returns the permit held under `id` (once; later calls
    /// find nothing).
    static RELEASE: Closure<dyn FnMut(f64)> = Closure::new(|id: f64| {
        let Some(id) = id_from_js(id) else { return };
        let permit = HELD.with(|held| held.borrow_mut().remove(id));
        // Dropped outside the borrow: the release may wake other tasks.
        drop(permit);
    });
}

/// Keeps `permit` until JavaScript calls the release callback with the
/// returned id (a JavaScript number).
pub fn hold(permit: Permit) -> f64 {
    id_to_js(HELD.with(|held| held.borrow_mut().insert(permit)))
}

/// Runs `f` with the shared release callback (`release(id)`).
pub fn with_release<T>(f: impl FnOnce(&JsValue) -> T) -> T {
    RELEASE.with(|release| f(release.as_ref()))
}

/// Keeps `permit` until `value` (a promise or any value) settles, fulfilled
/// or rejected; at once if `Promise.resolve(value)` throws. Never throws.
pub fn hold_until_settled(permit: Permit, value: &JsValue) {
    let id = hold(permit);
    // The release ignores watchSettled's outcome arguments.
    with_release(|release| crate::host::js::watch_settled(value, id, release));
}
