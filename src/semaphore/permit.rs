//! [`Permit`]: one slot of a [`Semaphore`](super::Semaphore), returned on drop.

use super::keys::KeySlot;
use super::state::Inner;
use crate::criticality::Criticality;
use crate::sync::{lock, Arc};
use core::fmt;

/// A permit from a [`Semaphore`](super::Semaphore); returned to it when dropped.
#[must_use = "a permit is returned as soon as it is dropped"]
pub struct Permit {
    /// One pointer, as before criticalities existed: the semaphore keeps one
    /// handle per criticality and hands out clones of it (a keyed permit
    /// gets its own). With the rank and key stored beside the pointer
    /// instead, the larger permit made every response future that carries
    /// one larger to move, 10–40 % on benches/core's plain paths.
    handle: Arc<Handle>,
}

/// What a permit needs to come back: the semaphore, its criticality and the
/// key slot counted for the fair share, if any.
pub(super) struct Handle {
    inner: Arc<Inner>,
    rank: Criticality,
    key: Option<KeySlot>,
}

impl Handle {
    pub(super) fn new(inner: Arc<Inner>, rank: Criticality, key: Option<KeySlot>) -> Self {
        Self { inner, rank, key }
    }
}

impl Permit {
    pub(super) fn new(handle: Arc<Handle>) -> Self {
        Self { handle }
    }

    /// The criticality of the call this permit was taken for
    /// ([`Default`](Criticality::Default) for a plain acquisition).
    pub fn criticality(&self) -> Criticality {
        self.handle.rank
    }
}

impl Drop for Permit {
    #[inline]
    fn drop(&mut self) {
        let Handle { inner, rank, key } = &*self.handle;
        match key {
            None => {
                inner.count_returned(*rank);
                inner.release();
            }
            Some(slot) => {
                let wakers = {
                    let mut queue = lock(&inner.queue);
                    inner.count_returned(*rank);
                    inner.release_keyed_locked(&mut queue, *slot)
                };
                wakers.wake();
            }
        }
    }
}

impl fmt::Debug for Permit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permit")
            .field("criticality", &self.criticality())
            .finish_non_exhaustive()
    }
}
