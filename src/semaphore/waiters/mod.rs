//! The queue of waiting acquirers: per criticality, one FIFO list per key
//! (a *flow*), linked by index through a slab of nodes.
//!
//! Which flow is served next is the queue's choice (`queue.rs`, fair
//! queueing); this module keeps the flows: it appends, finds either end of
//! a flow, and takes nodes out. Indices instead of pointers keep the code
//! safe; a stamp, unique to each waiter ever queued, on every node makes a
//! stale [`Place`] (from a node already freed, trimmed away or reused)
//! harmless. Memory follows the live waiters (see `slab.rs`); the per-key
//! list heads follow the key table, which forgets idle keys at once.

mod slab;

use super::keys::KeySlot;
use crate::criticality::Criticality;
use crate::per_criticality::PerCriticality;
use crate::time::Instant;
use core::task::Waker;
use slab::{Slab, Slot};

#[cfg(test)]
pub(crate) use super::buffers::FLOOR;

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
    /// Out of the queue: an arrival of a key holding less took its place in
    /// a full queue (its own key held the most).
    Unfair,
    /// Out of the queue: it reached the head of a standing codel queue after
    /// waiting longer than the target.
    Stale,
}

/// What a waiter asked for: its criticality and its key's slot (the
/// keyless key's for a call without one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tag {
    pub(crate) rank: Criticality,
    pub(crate) key: KeySlot,
}

#[derive(Debug)]
struct Node {
    /// The stamp of the place that owns this slot.
    stamp: u64,
    /// `None` while the slot is free.
    standing: Option<Standing>,
    tag: Tag,
    /// When it arrived (codel queues only).
    at: Option<Instant>,
    prev: Option<usize>,
    next: Option<usize>,
}

impl Slot for Node {
    fn is_free(&self) -> bool {
        self.standing.is_none()
    }
}

/// One flow: a key's waiters of one criticality, oldest at the head.
#[derive(Clone, Copy, Debug, Default)]
struct List {
    head: Option<usize>,
    tail: Option<usize>,
    len: usize,
    /// Its place in its criticality's list of flows with waiters.
    pos: usize,
}

/// The queue. `len` counts only nodes still [`Standing::Waiting`].
#[derive(Debug, Default)]
pub(crate) struct Waiters {
    slab: Slab<Node>,
    /// Per key slot, its flow in each criticality.
    flows: Vec<PerCriticality<List>>,
    /// Per criticality, the keys with waiters in it (in no order).
    active: PerCriticality<Vec<KeySlot>>,
    len_of: PerCriticality<usize>,
    len: usize,
    next_stamp: u64,
    /// What `list_mut` would hand out if `flows` could not grow (it can):
    /// a stand-in instead of a panic.
    scratch: List,
}

impl Waiters {
    /// Number of waiters still queued.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Number of waiters of `rank` still queued.
    pub(crate) fn len_of(&self, rank: Criticality) -> usize {
        self.len_of[rank]
    }

    /// Entries the slab and its lists have room for (test support).
    pub(crate) fn capacity(&self) -> usize {
        self.slab.capacity() + self.flows.capacity()
    }

    /// The most critical rank with a waiter.
    pub(crate) fn top_rank(&self) -> Option<Criticality> {
        Criticality::ALL
            .into_iter()
            .find(|&rank| self.len_of(rank) > 0)
    }

    /// The keys with waiters of `rank`.
    pub(crate) fn flows(&self, rank: Criticality) -> &[KeySlot] {
        &self.active[rank]
    }

    /// Waiters of `key` of `rank`.
    pub(crate) fn flow_len(&self, key: KeySlot, rank: Criticality) -> usize {
        self.list(key, rank).map_or(0, |list| list.len)
    }

    /// The oldest (or, with `newest`, the newest) waiter of `key` of `rank`,
    /// as a slab index.
    pub(crate) fn end(&self, key: KeySlot, rank: Criticality, newest: bool) -> Option<usize> {
        let list = self.list(key, rank)?;
        if newest {
            list.tail
        } else {
            list.head
        }
    }

    /// When the waiter at `index` arrived (codel queues only).
    pub(crate) fn arrived(&self, index: usize) -> Option<Instant> {
        self.slab.get(index)?.at
    }

    /// The stamp of the waiter at `index`: larger is newer.
    pub(crate) fn stamp(&self, index: usize) -> u64 {
        self.slab.get(index).map_or(0, |node| node.stamp)
    }

    /// Appends a waiter at the back of its key's flow in its criticality.
    pub(crate) fn push(&mut self, waker: Waker, tag: Tag, at: Option<Instant>) -> Place {
        let stamp = self.next_stamp;
        self.next_stamp = self.next_stamp.wrapping_add(1);
        let tail = self.list(tag.key, tag.rank).and_then(|list| list.tail);
        let index = self.slab.insert(Node {
            stamp,
            standing: Some(Standing::Waiting(Some(waker))),
            tag,
            at,
            prev: tail,
            next: None,
        });
        match tail.and_then(|tail| self.slab.get_mut(tail)) {
            Some(tail) => tail.next = Some(index),
            None => {
                let pos = self.active[tag.rank].len();
                self.active[tag.rank].push(tag.key);
                let list = self.list_mut(tag.key, tag.rank);
                list.head = Some(index);
                list.pos = pos;
            }
        }
        let list = self.list_mut(tag.key, tag.rank);
        list.tail = Some(index);
        list.len += 1;
        self.len_of[tag.rank] += 1;
        self.len += 1;
        Place { index, stamp }
    }

    /// The standing of `place`'s waiter, or `None` if the place is stale.
    pub(crate) fn standing_mut(&mut self, place: Place) -> Option<&mut Standing> {
        self.slab
            .get_mut(place.index)
            .filter(|node| node.stamp == place.stamp)
            .and_then(|node| node.standing.as_mut())
    }

    /// Takes the queued waiter at `index` out of its flow with `standing`
    /// (granted, displaced, stale); returns its waker and tag.
    pub(crate) fn take_out(
        &mut self,
        index: usize,
        standing: Standing,
    ) -> Option<(Option<Waker>, Tag)> {
        if !matches!(self.slab.get(index)?.standing, Some(Standing::Waiting(_))) {
            return None;
        }
        self.unlink(index);
        let node = self.slab.get_mut(index)?;
        match node.standing.replace(standing) {
            Some(Standing::Waiting(waker)) => Some((waker, node.tag)),
            _ => Some((None, node.tag)),
        }
    }

    /// Takes every queued waiter out as [`Standing::Closed`]; returns their
    /// wakers and tags.
    pub(crate) fn close_all(&mut self) -> Vec<(Option<Waker>, Tag)> {
        let mut closed = Vec::with_capacity(self.len);
        while let Some(rank) = self.top_rank() {
            let first = self.active[rank].first().copied();
            let Some(index) = first.and_then(|key| self.end(key, rank, false)) else {
                break;
            };
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
        let node = self.slab.get_mut(place.index)?;
        let out = node.standing.take().map(|standing| (standing, node.tag));
        self.slab.release(place.index);
        out
    }
}

mod flows;
#[cfg(test)]
mod tests;
