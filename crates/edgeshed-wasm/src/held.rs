//! Permits held on behalf of JavaScript until it calls back, with one
//! shared release callback instead of a wasm-bindgen closure per permit.
//!
//! A permit is held as a [`Lease`]: the permit and, optionally, whom to tell
//! once it is back (the npm package's `onIdle` and `close` wait for that).

use crate::id_map::{id_from_js, id_to_js, Registry};
use core::cell::RefCell;
use edgeshed::semaphore::Permit;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// Told each time a [`Lease`]'s permit has been returned.
pub trait Released {
    /// The permit is back (called after it was dropped, outside any borrow
    /// of the registry).
    fn released(&self);
}

/// A permit and whom to tell when it is returned: dropping the lease drops
/// the permit, then calls [`Released::released`].
pub struct Lease {
    // Fields drop in order: the permit is back before `then` is told.
    permit: Permit,
    _then: Then,
}

/// Calls [`Released::released`] when dropped.
struct Then(Option<Rc<dyn Released>>);

impl Drop for Then {
    fn drop(&mut self) {
        if let Some(then) = &self.0 {
            then.released();
        }
    }
}

impl Lease {
    /// `permit`, telling `then` once it is returned.
    pub fn new(permit: Permit, then: Option<Rc<dyn Released>>) -> Self {
        Self {
            permit,
            _then: Then(then),
        }
    }
}

/// A lease that tells no one.
impl From<Permit> for Lease {
    fn from(permit: Permit) -> Self {
        Self::new(permit, None)
    }
}

impl core::fmt::Debug for Lease {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Lease")
            .field("permit", &self.permit)
            .finish_non_exhaustive()
    }
}

thread_local! {
    static HELD: RefCell<Registry<Lease>> = RefCell::new(Registry::default());
    /// `release(id)`: returns the permit held under `id` (once; later calls
    /// find nothing).
    static RELEASE: Closure<dyn FnMut(f64)> = Closure::new(|id: f64| {
        let Some(id) = id_from_js(id) else { return };
        let lease = HELD.with(|held| held.borrow_mut().remove(id));
        // Dropped outside the borrow: the release may wake other tasks.
        drop(lease);
    });
}

/// Keeps `permit` (a [`Permit`] or a [`Lease`]) until JavaScript calls the
/// release callback with the returned id (a JavaScript number).
pub fn hold(permit: impl Into<Lease>) -> f64 {
    let lease = permit.into();
    id_to_js(HELD.with(|held| held.borrow_mut().insert(lease)))
}

/// Runs `f` with the shared release callback (`release(id)`).
pub fn with_release<T>(f: impl FnOnce(&JsValue) -> T) -> T {
    RELEASE.with(|release| f(release.as_ref()))
}

/// Keeps `permit` until `value` (a promise or any value) settles, fulfilled
/// or rejected; at once if `Promise.resolve(value)` throws. Never throws.
pub fn hold_until_settled(permit: impl Into<Lease>, value: &JsValue) {
    let id = hold(permit);
    // The release ignores watchSettled's outcome arguments.
    with_release(|release| crate::host::js::watch_settled(value, id, release));
}
