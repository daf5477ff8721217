//! Permits held on behalf of JavaScript until it calls back, with one
//! shared release callback instead of a wasm-bindgen closure per permit.

use crate::semaphore::Permit;
use core::cell::RefCell;
use wasm_bindgen::prelude::*;

#[derive(Default)]
struct Held {
    next_id: u32,
    permits: super::id_map::IdMap<Permit>,
}

thread_local! {
    static HELD: RefCell<Held> = RefCell::new(Held::default());
    /// `release(id)`: returns the permit held under `id` (once; later calls
    /// find nothing).
    static RELEASE: Closure<dyn FnMut(u32)> = Closure::new(|id: u32| {
        let permit = HELD.with(|held| held.borrow_mut().permits.remove(&id));
        // Dropped outside the borrow: the release may wake other tasks.
        drop(permit);
    });
}

/// Keeps `permit` until JavaScript calls the release callback with the
/// returned id.
pub(crate) fn hold(permit: Permit) -> u32 {
    HELD.with(|held| {
        let mut held = held.borrow_mut();
        let id = held.next_id;
        held.next_id = held.next_id.wrapping_add(1);
        held.permits.insert(id, permit);
        id
    })
}

/// Runs `f` with the shared release callback (`release(id)`).
pub(crate) fn with_release<T>(f: impl FnOnce(&JsValue) -> T) -> T {
    RELEASE.with(|release| f(release.as_ref()))
}
