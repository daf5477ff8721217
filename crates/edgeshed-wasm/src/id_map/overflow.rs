//! The ids of a [`Registry`](super::Registry)'s slots past its first 2^24:
//! counted up from 2^52 (never one still in use) and mapped to their slot.
//! Not generic, so one copy of this code serves every registry.

use super::{MAX_ID, MIN_CAPACITY, SLAB_IDS};
use std::collections::hash_map::Entry;
use std::collections::HashMap;

/// A hasher for sequential ids (multiplicative hashing: far cheaper than
/// SipHash, and ids are not attacker-chosen).
#[derive(Default)]
struct IdHasher(u64);

impl core::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*byte)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u64(&mut self, id: u64) {
        self.0 = id.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// Overflow ids and the slot each names.
pub(super) struct Overflow {
    /// The next id to try (from `SLAB_IDS` to `MAX_ID`, then around again).
    next: u64,
    slots: HashMap<u64, usize, core::hash::BuildHasherDefault<IdHasher>>,
}

impl Default for Overflow {
    fn default() -> Self {
        Self {
            next: SLAB_IDS,
            slots: HashMap::default(),
        }
    }
}

impl Overflow {
    /// A fresh id for slot `index`.
    #[inline(never)]
    pub(super) fn insert(&mut self, index: usize) -> u64 {
        loop {
            let id = self.next;
            self.next = if id >= MAX_ID { SLAB_IDS } else { id + 1 };
            if let Entry::Vacant(vacant) = self.slots.entry(id) {
                vacant.insert(index);
                return id;
            }
        }
    }

    /// The slot `id` names, if live.
    #[inline(never)]
    pub(super) fn index(&self, id: u64) -> Option<usize> {
        self.slots.get(&id).copied()
    }

    /// Forgets `id`; the map gives its memory back once three quarters empty.
    #[inline(never)]
    pub(super) fn remove(&mut self, id: u64) {
        self.slots.remove(&id);
        let capacity = self.slots.capacity();
        if capacity > MIN_CAPACITY && self.slots.len() < capacity / 4 {
            self.slots
                .shrink_to((self.slots.len() * 2).max(MIN_CAPACITY));
        }
    }

    /// The live overflow ids.
    pub(super) fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.slots.keys().copied()
    }
}
