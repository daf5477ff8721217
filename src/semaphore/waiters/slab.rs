//! The waiters' storage: a slab of nodes addressed by index, whose memory
//! follows the live count, not the peak.
//!
//! A place is an index, so a live node never moves; instead:
//! - a new node takes the *lowest* free slot (a min-heap), so live nodes
//!   gather at the front of the slab once an old burst has drained;
//! - free slots at the end of the slab are dropped at once, so the slab never
//!   ends in a free slot (and is empty when nobody holds a slot);
//! - the slab's and the free list's buffers shrink once they are at most a
//!   quarter full (above a small floor), and free-list entries that point past
//!   the end are swept once they outnumber the real ones.
//!
//! Each of these costs O(1) amortised; nothing allocates while the slab stays
//! within its current capacity.

use super::super::buffers::{shrink, FLOOR};
use core::cmp::Reverse;
use std::collections::BinaryHeap;

/// What the slab needs of a node: whether its slot is free.
pub(super) trait Slot {
    fn is_free(&self) -> bool;
}

#[derive(Debug)]
pub(super) struct Slab<N> {
    nodes: Vec<N>,
    /// Free slots, lowest first. Every free slot below `nodes.len()` is in
    /// it; it may also hold indices at or past `nodes.len()` (slots trimmed
    /// away since), which are skipped when popped and swept in bulk.
    free: BinaryHeap<Reverse<usize>>,
    /// Slots in use.
    occupied: usize,
}

impl<N> Default for Slab<N> {
    fn default() -> Self {
        Self {
            nodes: Vec::new(),
            free: BinaryHeap::new(),
            occupied: 0,
        }
    }
}

impl<N: Slot> Slab<N> {
    /// Entries the slab and its free list have room for (test support).
    pub(super) fn capacity(&self) -> usize {
        self.nodes.capacity() + self.free.capacity()
    }

    /// Slots in the slab, free or not (test support).
    #[cfg(test)]
    pub(super) fn slots(&self) -> usize {
        self.nodes.len()
    }

    /// Entries in the free list (test support).
    #[cfg(test)]
    pub(super) fn free_entries(&self) -> usize {
        self.free.len()
    }

    /// Slots in use (test support).
    #[cfg(test)]
    pub(super) fn occupied(&self) -> usize {
        self.occupied
    }

    pub(super) fn get(&self, index: usize) -> Option<&N> {
        self.nodes.get(index)
    }

    pub(super) fn get_mut(&mut self, index: usize) -> Option<&mut N> {
        self.nodes.get_mut(index)
    }

    /// Stores `node` in the lowest free slot; returns its index.
    pub(super) fn insert(&mut self, node: N) -> usize {
        self.occupied += 1;
        while let Some(Reverse(index)) = self.free.pop() {
            if let Some(slot) = self.nodes.get_mut(index) {
                if slot.is_free() {
                    *slot = node;
                    return index;
                }
            }
            // Trimmed away since it was freed: skip it.
        }
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    /// Records that the node at `index` was made free by its owner; gives
    /// memory back (see the module docs).
    pub(super) fn release(&mut self, index: usize) {
        self.occupied = self.occupied.saturating_sub(1);
        self.free.push(Reverse(index));
        while self.nodes.last().is_some_and(Slot::is_free) {
            self.nodes.pop();
        }
        let slots = self.nodes.len();
        if self.occupied == 0 {
            // Nothing is live, so the slab is empty and every entry is stale.
            self.free.clear();
        } else if self.free.len() > 2 * (slots - self.occupied.min(slots)) + FLOOR {
            self.free.retain(|&Reverse(index)| index < slots);
        }
        shrink(&mut self.nodes);
        let entries = self.free.len();
        if self.free.capacity() > FLOOR && entries * 4 <= self.free.capacity() {
            self.free.shrink_to((entries * 2).max(FLOOR));
        }
    }
}
