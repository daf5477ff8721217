//! [`Permit`]: one slot of a [`Semaphore`](super::Semaphore), returned on drop.

use super::keys::KeySlot;
use super::state::Inner;
use crate::admission::Criticality;
use crate::sync::{lock, Arc};
use core::fmt;

/// A permit from a [`Semaphore`](super::Semaphore); returned to it when dropped.
#[must_use = "a permit is returned as soon as it is dropped"]
pub struct Permit {
    inner: Arc<Inner>,
    rank: Criticality,
    /// The key counted for the fair share while this permit is held.
    key: Option<KeySlot>,
}

impl Permit {
    pub(super) fn new(inner: Arc<Inner>, rank: Criticality, key: Option<KeySlot>) -> Self {
        Self { inner, rank, key }
    }

    /// The criticality of the call this permit was taken for
    /// ([`Default`](Criticality::Default) for a plain acquisition).
    pub fn criticality(&self) -> Criticality {
        self.rank
    }
}

impl Drop for Permit {
    #[inline]
    fn drop(&mut self) {
        match self.key {
            None => {
                self.inner.count_held(self.rank, false);
                self.inner.release();
            }
            Some(slot) => {
                let waker = {
                    let mut queue = lock(&self.inner.queue);
                    self.inner.release_keyed_locked(&mut queue, self.rank, slot)
                };
                if let Some(waker) = waker {
                    waker.wake();
                }
            }
        }
    }
}

impl fmt::Debug for Permit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permit")
            .field("criticality", &self.rank)
            .finish_non_exhaustive()
    }
}
