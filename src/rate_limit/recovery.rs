//! [`Recoveries`]: when each tracked key will have recovered, earliest first
//! (a min-heap with lazy deletion), so that a full table frees a recovered
//! key in amortised O(log n) instead of scanning every entry.
//!
//! Each tracked key has one *current* entry: the time its TAT had when it
//! was scheduled, a lower bound of its TAT (TATs only grow, except by a
//! refund, which schedules the key anew when it goes below). An entry that
//! is no longer current (its key was refunded below it, or is gone) is
//! *stale* and skipped when it comes out. The table re-checks a current
//! entry when it is due: a recovered key is dropped, a key whose TAT grew
//! since is scheduled again at its TAT. So every entry that comes out is
//! paid for by one earlier operation: a stale one by the refund that
//! replaced it, a re-scheduled one by the calls that moved its TAT, a
//! dropped one by the insert that tracked it.

use core::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// One scheduled recovery: `key` (of the table's `generation` of it) has
/// not recovered before `at` (ns).
#[derive(Debug)]
pub(super) struct Due<K> {
    pub(super) at: u64,
    pub(super) generation: u64,
    pub(super) key: K,
}

// Ordered by time, then generation (unique per insert): the key itself
// needs no order.
impl<K> PartialEq for Due<K> {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.generation) == (other.at, other.generation)
    }
}

impl<K> Eq for Due<K> {}

impl<K> PartialOrd for Due<K> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<K> Ord for Due<K> {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.generation).cmp(&(other.at, other.generation))
    }
}

/// The scheduled recoveries, earliest first.
#[derive(Debug)]
pub(super) struct Recoveries<K> {
    heap: BinaryHeap<Reverse<Due<K>>>,
}

impl<K> Recoveries<K> {
    pub(super) fn new() -> Self {
        Self {
            heap: BinaryHeap::new(),
        }
    }

    /// Schedules `key` (its `generation`) to be looked at once `at` has come.
    pub(super) fn schedule(&mut self, at: u64, generation: u64, key: K) {
        self.heap.push(Reverse(Due {
            at,
            generation,
            key,
        }));
    }

    /// Takes out the earliest entry if it is due at `now`.
    pub(super) fn pop_due(&mut self, now: u64) -> Option<Due<K>> {
        if self.heap.peek().is_some_and(|Reverse(due)| due.at <= now) {
            self.heap.pop().map(|Reverse(due)| due)
        } else {
            None
        }
    }

    /// Entries held, stale ones included.
    pub(super) fn len(&self) -> usize {
        self.heap.len()
    }

    /// Replaces every entry by `current` (O(n): the heap is built at once).
    pub(super) fn rebuild(&mut self, current: impl Iterator<Item = Due<K>>) {
        self.heap = current.map(Reverse).collect();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn entries_come_out_earliest_first_and_only_once_due() {
        let mut due = Recoveries::new();
        due.schedule(30, 0, "c");
        due.schedule(10, 1, "a");
        due.schedule(10, 2, "b");
        assert!(due.pop_due(9).is_none());
        assert_eq!(due.pop_due(10).unwrap().key, "a");
        assert_eq!(due.pop_due(10).unwrap().key, "b");
        assert!(due.pop_due(29).is_none());
        due.rebuild(
            [Due {
                at: 5,
                generation: 3,
                key: "d",
            }]
            .into_iter(),
        );
        assert_eq!(due.len(), 1);
        assert_eq!(due.pop_due(100).unwrap().key, "d");
        assert!(due.pop_due(u64::MAX).is_none());
    }
}
