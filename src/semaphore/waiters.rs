//! The queue of waiting acquirers: a slab of nodes, linked by index into one
//! list per criticality (FIFO within one).
//!
//! Indices instead of pointers keep the code safe; a stamp, unique to each
//! waiter ever queued, on every slot makes a stale [`Place`] (from a node
//! already freed, trimmed away or reused) harmless.
//!
//! Memory follows the live count, not the peak. A place is an index, so a
//! live node never moves; instead:
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

use super::keys::KeySlot;
use crate::criticality::Criticality;
use core::cmp::Reverse;
use core::task::Waker;
use std::collections::BinaryHeap;

/// Buffers at or below this many entries are never shrunk.
const FLOOR: usize = 32;

/// Identifies one waiter's slot; stays valid until [`Waiters::free`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Place {
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
    /// Out of the queue: a more critical arrival took its place in a full queue.
    Displaced,
}

/// What a waiter asked for: its criticality and its key's slot, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tag {
    pub(crate) rank: Criticality,
    pub(crate) key: Option<KeySlot>,
}

#[derive(Debug)]
struct Node {
    /// The stamp of the place that owns this slot.
    stamp: u64,
    /// `None` while the slot is free.
    standing: Option<Standing>,
    tag: Tag,
    prev: Option<usize>,
    next: Option<usize>,
}

/// One criticality's list: oldest at the head.
#[derive(Clone, Copy, Debug, Default)]
struct List {
    head: Option<usize>,
    tail: Option<usize>,
    len: usize,
}

/// The queue. `len` counts only nodes still [`Standing::Waiting`];
/// `occupied` counts every slot a place owns (waiting, granted or out).
#[derive(Debug, Default)]
pub(crate) struct Waiters {
    nodes: Vec<Node>,
    /// Sheddable, default, critical.
    lists: [List; 3],
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

    /// Number of waiters of `rank` still queued.
    pub(crate) fn len_of(&self, rank: Criticality) -> usize {
        self.list(rank).len
    }

    /// Entries the slab and its free list have room for (test support).
    pub(crate) fn capacity(&self) -> usize {
        self.nodes.capacity() + self.free.capacity()
    }

    /// The most critical rank with a waiter.
    pub(crate) fn top_rank(&self) -> Option<Criticality> {
        Criticality::ALL
            .into_iter()
            .find(|&rank| self.len_of(rank) > 0)
    }

    /// Appends a waiter at the back of its criticality's list.
    pub(crate) fn push(&mut self, waker: Waker, tag: Tag) -> Place {
        let stamp = self.next_stamp;
        self.next_stamp = self.next_stamp.wrapping_add(1);
        let tail = self.list(tag.rank).tail;
        let node = Node {
            stamp,
            standing: Some(Standing::Waiting(Some(waker))),
            tag,
            prev: tail,
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
        match tail.and_then(|tail| self.nodes.get_mut(tail)) {
            Some(tail) => tail.next = Some(index),
            None => self.list_mut(tag.rank).head = Some(index),
        }
        let list = self.list_mut(tag.rank);
        list.tail = Some(index);
        list.len += 1;
        self.len += 1;
        self.occupied += 1;
        Place { index, stamp }
    }

    /// The standing of `place`'s waiter, or `None` if the place is stale.
    pub(crate) fn standing_mut(&mut self, place: Place) -> Option<&mut Standing> {
        self.nodes
            .get_mut(place.index)
            .filter(|node| node.stamp == place.stamp)
            .and_then(|node| node.standing.as_mut())
    }

    /// The first waiter of `rank` in serve order (oldest first, or newest
    /// first when `newest_first`) whose tag `wanted` accepts, as a slab index.
    pub(crate) fn find(
        &self,
        rank: Criticality,
        newest_first: bool,
        mut wanted: impl FnMut(Tag) -> bool,
    ) -> Option<usize> {
        let list = self.list(rank);
        let mut at = if newest_first { list.tail } else { list.head };
        while let Some(index) = at {
            let node = self.nodes.get(index)?;
            if wanted(node.tag) {
                return Some(index);
            }
            at = if newest_first { node.prev } else { node.next };
        }
        None
    }

    /// The newest waiter of the least critical rank below `rank`: the one a
    /// `rank` arrival displaces from a full queue.
    pub(crate) fn newest_below(&self, rank: Criticality) -> Option<usize> {
        Criticality::ALL
            .into_iter()
            .rev()
            .take_while(|&lower| lower < rank)
            .find_map(|lower| self.list(lower).tail)
    }

    /// Takes the queued waiter at `index` out of its list with `standing`
    /// (granted or displaced); returns its waker and tag.
    pub(crate) fn take_out(
        &mut self,
        index: usize,
        standing: Standing,
    ) -> Option<(Option<Waker>, Tag)> {
        if !matches!(self.nodes.get(index)?.standing, Some(Standing::Waiting(_))) {
            return None;
        }
        self.unlink(index);
        let node = self.nodes.get_mut(index)?;
        match node.standing.replace(standing) {
            Some(Standing::Waiting(waker)) => Some((waker, node.tag)),
            _ => Some((None, node.tag)),
        }
    }

    /// Takes every queued waiter out as [`Standing::Closed`]; returns their
    /// wakers and tags.
    pub(crate) fn close_all(&mut self) -> Vec<(Option<Waker>, Tag)> {
        let mut closed = Vec::with_capacity(self.len);
        while let Some(index) = self.top_rank().and_then(|rank| self.list(rank).head) {
            if let Some(out) = self.take_out(index, Standing::Closed) {
                closed.push(out);
            }
        }
        closed
    }

    /// Removes `place`'s waiter (from the queue if still there) and frees its
    /// slot. Returns how it stood and its tag, or `None` if the place was stale.
    pub(crate) fn free(&mut self, place: Place) -> Option<(Standing, Tag)> {
        let standing = self.standing_mut(place)?;
        if matches!(standing, Standing::Waiting(_)) {
            self.unlink(place.index);
        }
        let node = self.nodes.get_mut(place.index)?;
        let out = node.standing.take().map(|standing| (standing, node.tag));
        self.occupied = self.occupied.saturating_sub(1);
        self.free.push(Reverse(place.index));
        self.release_memory();
        out
    }

    fn list(&self, rank: Criticality) -> &List {
        let [sheddable, default, critical] = &self.lists;
        match rank {
            Criticality::Sheddable => sheddable,
            Criticality::Default => default,
            Criticality::Critical => critical,
        }
    }

    fn list_mut(&mut self, rank: Criticality) -> &mut List {
        let [sheddable, default, critical] = &mut self.lists;
        match rank {
            Criticality::Sheddable => sheddable,
            Criticality::Default => default,
            Criticality::Critical => critical,
        }
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

    /// Takes a queued node out of its list (its slot stays allocated).
    fn unlink(&mut self, index: usize) {
        let Some(node) = self.nodes.get_mut(index) else {
            return;
        };
        let rank = node.tag.rank;
        let (prev, next) = (node.prev.take(), node.next.take());
        match prev.and_then(|prev| self.nodes.get_mut(prev)) {
            Some(prev_node) => prev_node.next = next,
            None => self.list_mut(rank).head = next,
        }
        match next.and_then(|next| self.nodes.get_mut(next)) {
            Some(next_node) => next_node.prev = prev,
            None => self.list_mut(rank).tail = prev,
        }
        let list = self.list_mut(rank);
        list.len = list.len.saturating_sub(1);
        self.len = self.len.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests;
