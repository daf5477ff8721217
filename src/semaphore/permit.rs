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
    /// The criticality (low 2 bits) and the key slot counted for the fair
    /// share (the bits above; 0 for none). One `u32` beside the pointer keeps
    /// the permit a pair of scalars, moved in two registers: as three fields
    /// it was copied through a vector register after field-wise stores, a
    /// store-forwarding stall that doubled the uncontended
    /// `ConcurrencyLimit` path (25 vs 11 ns/op, benches/core).
    tag: u32,
}

impl Permit {
    pub(super) fn new(inner: Arc<Inner>, rank: Criticality, key: Option<KeySlot>) -> Self {
        let tag = rank.index() as u32 | key.map_or(0, |slot| slot.raw() << 2);
        Self { inner, tag }
    }

    /// The criticality of the call this permit was taken for
    /// ([`Default`](Criticality::Default) for a plain acquisition).
    pub fn criticality(&self) -> Criticality {
        match self.tag & 3 {
            0 => Criticality::Sheddable,
            2 => Criticality::Critical,
            _ => Criticality::Default,
        }
    }

    fn key(&self) -> Option<KeySlot> {
        KeySlot::from_raw(self.tag >> 2)
    }
}

impl Drop for Permit {
    #[inline]
    fn drop(&mut self) {
        let rank = self.criticality();
        match self.key() {
            None => {
                self.inner.count_returned(rank);
                self.inner.release();
            }
            Some(slot) => {
                let waker = {
                    let mut queue = lock(&self.inner.queue);
                    self.inner.count_returned(rank);
                    self.inner.release_keyed_locked(&mut queue, slot)
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
            .field("criticality", &self.criticality())
            .finish_non_exhaustive()
    }
}
