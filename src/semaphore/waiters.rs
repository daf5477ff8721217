//! The FIFO queue of waiting acquirers: a slab of nodes linked by index.
//!
//! Indices instead of pointers keep the code safe; a generation number on
//! every slot makes a stale [`Key`] (from a node already freed and reused)
//! harmless. Nothing here allocates once the slab has grown to the peak number
//! of concurrent waiters.

use core::task::Waker;

/// Identifies one waiter's slot; stays valid until [`Waiters::free`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Key {
    index: usize,
    generation: u32,
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
    generation: u32,
    /// `None` while the slot is free.
    standing: Option<Standing>,
    prev: Option<usize>,
    next: Option<usize>,
}

/// The queue. `len` counts only nodes still [`Standing::Waiting`].
#[derive(Debug, Default)]
pub(crate) struct Waiters {
    nodes: Vec<Node>,
    head: Option<usize>,
    tail: Option<usize>,
    free: Vec<usize>,
    len: usize,
}

impl Waiters {
    /// Number of waiters still queued.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Appends a waiter at the back of the queue.
    pub(crate) fn push_back(&mut self, waker: Waker) -> Key {
        let node = Node {
            generation: 0,
            standing: Some(Standing::Waiting(Some(waker))),
            prev: self.tail,
            next: None,
        };
        let index = match self.free.pop() {
            Some(index) => {
                if let Some(slot) = self.nodes.get_mut(index) {
                    let generation = slot.generation;
                    *slot = Node { generation, ..node };
                }
                index
            }
            None => {
                self.nodes.push(node);
                self.nodes.len() - 1
            }
        };
        match self.tail.and_then(|tail| self.nodes.get_mut(tail)) {
            Some(tail) => tail.next = Some(index),
            None => self.head = Some(index),
        }
        self.tail = Some(index);
        self.len += 1;
        Key {
            index,
            generation: self.generation_of(index),
        }
    }

    /// The standing of `key`'s waiter, or `None` if the key is stale.
    pub(crate) fn standing_mut(&mut self, key: Key) -> Option<&mut Standing> {
        self.nodes
            .get_mut(key.index)
            .filter(|node| node.generation == key.generation)
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
        let node = self.nodes.get_mut(key.index)?;
        let standing = node.standing.take();
        node.generation = node.generation.wrapping_add(1);
        self.free.push(key.index);
        standing
    }

    fn generation_of(&self, index: usize) -> u32 {
        self.nodes.get(index).map_or(0, |node| node.generation)
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
