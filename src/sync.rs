//! The synchronization primitives the core is built on, in one place.
//!
//! Everything that shares state between clones goes through these names, so a
//! model checker can swap them without touching the algorithms: built with
//! `RUSTFLAGS="--cfg loom"`, they are loom's instrumented versions (see
//! `tests/loom_semaphore.rs`); otherwise they are the standard library's.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::{Arc, Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::{Arc, Mutex, MutexGuard};

/// Locks `mutex`, ignoring poisoning.
///
/// The core never panics while holding a lock, and a poisoned lock only means
/// some *user* code panicked elsewhere; the protected state is still
/// consistent, so refusing to continue would turn one failure into many.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
