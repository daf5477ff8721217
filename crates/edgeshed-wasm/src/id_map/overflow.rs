//! The ids of a [`Registry`](super::Registry)'s slots past its first 2^24:
//! counted up from 2^52 (never one still in use) and mapped to their slot.
//! Not generic, so one copy of this code serves every registry.
//!
//! A sorted `Vec` rather than a `HashMap`: ids are handed out in increasing
//! order, so an insert is a push at the end (until the counter wraps after
//! 2^53 ids), and lookups are binary searches. This path only runs past 2^24
//! live calls, and a hash map here was one of three hashbrown copies in the
//! npm wasm (about 2.5 KiB raw; measured with scripts/build-pkg.sh).

use super::{MAX_ID, MIN_CAPACITY, SLAB_IDS};

/// Overflow ids and the slot each names, sorted by id.
pub(super) struct Overflow {
    /// The next id to try (from `SLAB_IDS` to `MAX_ID`, then around again).
    next: u64,
    slots: Vec<(u64, usize)>,
}

impl Default for Overflow {
    fn default() -> Self {
        Self {
            next: SLAB_IDS,
            slots: Vec::new(),
        }
    }
}

impl Overflow {
    /// Where `id` is, or would be inserted.
    fn find(&self, id: u64) -> Result<usize, usize> {
        self.slots.binary_search_by_key(&id, |&(live, _)| live)
    }

    /// A fresh id for slot `index`.
    #[inline(never)]
    pub(super) fn insert(&mut self, index: usize) -> u64 {
        loop {
            let id = self.next;
            self.next = if id >= MAX_ID { SLAB_IDS } else { id + 1 };
            if let Err(at) = self.find(id) {
                self.slots.insert(at, (id, index));
                return id;
            }
        }
    }

    /// The slot `id` names, if live.
    #[inline(never)]
    pub(super) fn index(&self, id: u64) -> Option<usize> {
        let at = self.find(id).ok()?;
        self.slots.get(at).map(|&(_, index)| index)
    }

    /// Forgets `id`; the list gives its memory back once three quarters empty.
    #[inline(never)]
    pub(super) fn remove(&mut self, id: u64) {
        if let Ok(at) = self.find(id) {
            self.slots.remove(at);
        }
        let capacity = self.slots.capacity();
        if capacity > MIN_CAPACITY && self.slots.len() < capacity / 4 {
            self.slots
                .shrink_to((self.slots.len() * 2).max(MIN_CAPACITY));
        }
    }

    /// The live overflow ids.
    pub(super) fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.slots.iter().map(|&(id, _)| id)
    }
}
