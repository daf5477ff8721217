//! The FIFO queue of waiting acquirers: a slab of nodes linked by index.
//!
//! Indices instead of pointers keep the code safe; a stamp, unique to each
//! waiter ever queued, on every slot makes a stale [`Key`] (from a node
//! already freed, trimmed away or reused) harmless.
//!
//! Memory follows the live count, not the peak. A key is an index, so a live
//! node never moves; instead:
//! - a new waiter takes the *lowest* free slot (a min-heap), so live nodes
//!   gather at the front of the slab once an old burst has drained;
//! - free slots at the end of the slab are dropped at once, so the slab never
//!   ends in a free slot (and is empty when nobody holds a slot);
//! - the slab's and the free list's buffers shrink once they are at most a
//!   quarter full (above a small floor), and free-list entries that point past
//!   the end are swept once they outnumber the real ones.
//!
//! Each of these costs O(1) amortised; nothing allocates while the queue
//! stays within its current capacity.

use core::cmp::Reverse;
use core::task::Waker;
use std::collections::BinaryHeap;

/// Buffers at or below this many entries are never shrunk.
const FLOOR: usize = 32;

/// Identifies one waiter's slot; stays valid until [`Waiters::free`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Key {
    index: usize,
    stamp: u64,
}

/// Where a waiter stands.
#[derive(Debug)]
pub(crate) enum Standing {
    /// In the queue, to be woken through this waker.
    Waiting(Option<Waker>),
    /// Out of the queue, holding a permit that was handed over to it.
    Granted,
    /// Out of the queue: the semaphore closed while it waited.
    Closed,
}

#[derive(Debug)]
struct Node {
    /// The stamp of the key that owns this slot.
    stamp: u64,
    /// `None` while the slot is free.
    standing: Option<Standing>,
    prev: Option<usize>,
    next: Option<usize>,
}

/// The queue. `len` counts only nodes still [`Standing::Waiting`];
/// `occupied` counts every slot a key owns (waiting, granted or closed).
#[derive(Debug, Default)]
pub(crate) struct Waiters {
    nodes: Vec<Node>,
    head: Option<usize>,
    tail: Option<usize>,
    /// Free slots, lowest first. Every free slot below `nodes.len()` is in
    /// it; it may also hold indices at or past `nodes.len()` (slots trimmed
    /// away since), which are skipped when popped and swept in bulk.
    free: BinaryHeap<Reverse<usize>>,
    len: usize,
    occupied: usize,
    next_stamp: u64,
}

impl Waiters {
    /// Number of waiters still queued.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Entries the slab and its free list have room for (test support).
    pub(crate) fn capacity(&self) -> usize {
        self.nodes.capacity() + self.free.capacity()
    }

    /// Appends a waiter at the back of the queue.
    pub(crate) fn push_back(&mut self, waker: Waker) -> Key {
        let stamp = self.next_stamp;
        self.next_stamp = self.next_stamp.wrapping_add(1);
        let node = Node {
            stamp,
            standing: Some(Standing::Waiting(Some(waker))),
            prev: self.tail,
            next: None,
        };
        let index = loop {
            match self.free.pop() {
                Some(Reverse(index)) => match self.nodes.get_mut(index) {
                    Some(slot) if slot.standing.is_none() => {
                        *slot = node;
                        break index;
                    }
                    // Trimmed away since it was freed: skip it.
                    _ => continue,
                },
                None => {
                    self.nodes.push(node);
                    break self.nodes.len() - 1;
                }
            }
        };
        match self.tail.and_then(|tail| self.nodes.get_mut(tail)) {
            Some(tail) => tail.next = Some(index),
            None => self.head = Some(index),
        }
        self.tail = Some(index);
        self.len += 1;
        self.occupied += 1;
        Key { index, stamp }
    }

    /// The standing of `key`'s waiter, or `None` if the key is stale.
    pub(crate) fn standing_mut(&mut self, key: Key) -> Option<&mut Standing> {
        self.nodes
            .get_mut(key.index)
            .filter(|node| node.stamp == key.stamp)
            .and_then(|node| node.standing.as_mut())
    }

    /// Hands a permit to the first waiter: it leaves the queue as
    /// [`Standing::Granted`]. Returns its waker, or `None` if nobody waits.
    pub(crate) fn grant_front(&mut self) -> Option<Option<Waker>> {
        let index = self.head?;
        self.unlink(index);
        let node = self.nodes.get_mut(index)?;
        match node.standing.replace(Standing::Granted) {
            Some(Standing::Waiting(waker)) => Some(waker),
            _ => Some(None),
        }
    }

    /// Takes every queued waiter out as [`Standing::Closed`]; returns their wakers.
    pub(crate) fn close_all(&mut self) -> Vec<Waker> {
        let mut wakers = Vec::with_capacity(self.len);
        while let Some(index) = self.head {
            self.unlink(index);
            if let Some(node) = self.nodes.get_mut(index) {
                if let Some(Standing::Waiting(Some(waker))) =
                    node.standing.replace(Standing::Closed)
                {
                    wakers.push(waker);
                }
            }
        }
        wakers
    }

    /// Removes `key`'s waiter (from the queue if still there) and frees its
    /// slot. Returns how it stood, or `None` if the key was stale.
    pub(crate) fn free(&mut self, key: Key) -> Option<Standing> {
        let standing = self.standing_mut(key)?;
        if matches!(standing, Standing::Waiting(_)) {
            self.unlink(key.index);
        }
        let standing = self.nodes.get_mut(key.index)?.standing.take();
        self.occupied = self.occupied.saturating_sub(1);
        self.free.push(Reverse(key.index));
        self.release_memory();
        standing
    }

    /// Gives memory back after a free (see the module docs).
    fn release_memory(&mut self) {
        while self
            .nodes
            .last()
            .is_some_and(|node| node.standing.is_none())
        {
            self.nodes.pop();
        }
        let slots = self.nodes.len();
        if self.occupied == 0 {
            // Nothing is live, so the slab is empty and every entry is stale.
            self.free.clear();
        } else if self.free.len() > 2 * (slots - self.occupied.min(slots)) + FLOOR {
            self.free.retain(|&Reverse(index)| index < slots);
        }
        if self.nodes.capacity() > FLOOR && slots * 4 <= self.nodes.capacity() {
            self.nodes.shrink_to((slots * 2).max(FLOOR));
        }
        let entries = self.free.len();
        if self.free.capacity() > FLOOR && entries * 4 <= self.free.capacity() {
            self.free.shrink_to((entries * 2).max(FLOOR));
        }
    }

    /// Takes a queued node out of the linked list (its slot stays allocated).
    fn unlink(&mut self, index: usize) {
        let Some(node) = self.nodes.get_mut(index) else {
            return;
        };
        let (prev, next) = (node.prev.take(), node.next.take());
        match prev.and_then(|prev| self.nodes.get_mut(prev)) {
            Some(prev_node) => prev_node.next = next,
            None => self.head = next,
        }
        match next.and_then(|next| self.nodes.get_mut(next)) {
            Some(next_node) => next_node.prev = prev,
            None => self.tail = prev,
        }
        self.len = self.len.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests;
