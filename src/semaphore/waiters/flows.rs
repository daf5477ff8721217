//! The links of the flows: a waiter's list per (key, criticality), made on
//! demand, and taking a waiter out of it.

use super::{List, Waiters};
use crate::criticality::Criticality;
use crate::per_criticality::PerCriticality;
use crate::semaphore::buffers::shrink;
use crate::semaphore::keys::KeySlot;

impl Waiters {
    pub(super) fn list(&self, key: KeySlot, rank: Criticality) -> Option<&List> {
        self.flows.get(key.index()).map(|lists| &lists[rank])
    }

    /// The list of `key` in `rank`, made (with those of lower slots) if needed.
    pub(super) fn list_mut(&mut self, key: KeySlot, rank: Criticality) -> &mut List {
        let index = key.index();
        if self.flows.len() <= index {
            self.flows.resize_with(index + 1, PerCriticality::default);
        }
        match self.flows.get_mut(index) {
            Some(lists) => &mut lists[rank],
            // Never: `flows` was just grown past `index`.
            None => &mut self.scratch,
        }
    }

    /// Takes a queued node out of its flow (its slot stays allocated); a
    /// flow left empty leaves its criticality's list of flows.
    pub(super) fn unlink(&mut self, index: usize) {
        let Some(node) = self.slab.get_mut(index) else {
            return;
        };
        let tag = node.tag;
        let (prev, next) = (node.prev.take(), node.next.take());
        match prev.and_then(|prev| self.slab.get_mut(prev)) {
            Some(prev_node) => prev_node.next = next,
            None => self.list_mut(tag.key, tag.rank).head = next,
        }
        match next.and_then(|next| self.slab.get_mut(next)) {
            Some(next_node) => next_node.prev = prev,
            None => self.list_mut(tag.key, tag.rank).tail = prev,
        }
        let list = self.list_mut(tag.key, tag.rank);
        list.len = list.len.saturating_sub(1);
        if list.len == 0 {
            let pos = list.pos;
            self.deactivate(tag.rank, pos);
        }
        self.len_of[tag.rank] = self.len_of[tag.rank].saturating_sub(1);
        self.len = self.len.saturating_sub(1);
    }

    /// Drops the flow at `pos` from `rank`'s flows with waiters; trims the
    /// per-key lists of keys past the last one with waiters.
    fn deactivate(&mut self, rank: Criticality, pos: usize) {
        let flows = &mut self.active[rank];
        if pos < flows.len() {
            flows.swap_remove(pos);
        }
        if let Some(&moved) = flows.get(pos) {
            self.list_mut(moved, rank).pos = pos;
        }
        while self
            .flows
            .last()
            .is_some_and(|lists| lists.iter().all(|(_, list)| list.len == 0))
        {
            self.flows.pop();
        }
        shrink(&mut self.flows);
        for rank in Criticality::ALL {
            shrink(&mut self.active[rank]);
        }
    }
}
