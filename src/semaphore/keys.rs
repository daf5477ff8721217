//! Per-key counts for the fair share: how many permits each key holds and
//! how many of its calls wait. A key with neither is forgotten at once, so
//! the table never holds more keys than there are calls in flight or waiting.

use crate::Key;
use core::num::NonZeroU32;
use std::collections::HashMap;

/// Buffers at or below this many entries are never shrunk.
const FLOOR: usize = 32;

/// A key's entry in the table; valid while the key holds or waits for a permit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KeySlot(NonZeroU32);

impl KeySlot {
    fn index(self) -> usize {
        (self.0.get() - 1) as usize
    }
}

#[derive(Debug)]
struct Entry {
    key: Key,
    holding: usize,
    waiting: usize,
}

#[derive(Debug, Default)]
pub(crate) struct KeyTable {
    entries: Vec<Option<Entry>>,
    free: Vec<usize>,
    index: HashMap<Key, KeySlot>,
    /// Calls of all keys waiting.
    waiting: usize,
}

impl KeyTable {
    /// The slot of `key`, if it holds or waits for a permit.
    pub(crate) fn get(&self, key: &Key) -> Option<KeySlot> {
        self.index.get(key).copied()
    }

    /// The slot of `key`, made if needed (then it counts nothing yet: the
    /// caller counts a permit or a wait at once, or calls [`forget_idle`](Self::forget_idle)).
    /// `None` only if the table cannot grow (2^32 keys at once; the call is
    /// then admitted as one without a key).
    pub(crate) fn slot(&mut self, key: &Key) -> Option<KeySlot> {
        if let Some(slot) = self.get(key) {
            return Some(slot);
        }
        let index = loop {
            match self.free.pop() {
                Some(index) if index < self.entries.len() => break index,
                Some(_) => continue,
                None => {
                    self.entries.push(None);
                    break self.entries.len() - 1;
                }
            }
        };
        let slot = KeySlot(NonZeroU32::new(u32::try_from(index + 1).ok()?)?);
        let entry = self.entries.get_mut(index)?;
        *entry = Some(Entry {
            key: key.clone(),
            holding: 0,
            waiting: 0,
        });
        self.index.insert(key.clone(), slot);
        Some(slot)
    }

    /// Keys holding or waiting for a permit.
    pub(crate) fn active(&self) -> usize {
        self.index.len()
    }

    /// Calls of any key waiting.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting
    }

    /// Permits `slot`'s key holds.
    pub(crate) fn holding(&self, slot: KeySlot) -> usize {
        self.entry(slot).map_or(0, |entry| entry.holding)
    }

    /// Whether calls of keys other than `slot`'s wait.
    pub(crate) fn others_waiting(&self, slot: Option<KeySlot>) -> bool {
        let own = slot
            .and_then(|slot| self.entry(slot))
            .map_or(0, |e| e.waiting);
        self.waiting > own
    }

    /// Whether `slot`'s key holds more than its fair share of `limit`
    /// (`limit` divided by the active keys).
    pub(crate) fn over_share(&self, slot: KeySlot, limit: usize) -> bool {
        self.holding(slot).saturating_mul(self.active()) > limit
    }

    /// Whether `slot`'s key holds less than its fair share of `limit`: one
    /// more permit keeps it within its share.
    pub(crate) fn under_share(&self, slot: KeySlot, limit: usize) -> bool {
        self.holding(slot).saturating_mul(self.active()) < limit
    }

    /// One more permit held (`by > 0`) or one fewer (`by < 0`) by `slot`'s key.
    pub(crate) fn add_holding(&mut self, slot: KeySlot, by: isize) {
        if let Some(entry) = self.entry_mut(slot) {
            entry.holding = entry.holding.saturating_add_signed(by);
        }
        self.forget_idle(slot);
    }

    /// One more call of `slot`'s key waiting (`by > 0`) or one fewer (`by < 0`).
    pub(crate) fn add_waiting(&mut self, slot: KeySlot, by: isize) {
        let mut changed = false;
        if let Some(entry) = self.entry_mut(slot) {
            let before = entry.waiting;
            entry.waiting = entry.waiting.saturating_add_signed(by);
            changed = entry.waiting != before;
        }
        if changed {
            self.waiting = self.waiting.saturating_add_signed(by);
        }
        self.forget_idle(slot);
    }

    /// Forgets `slot`'s key if it neither holds nor waits for a permit.
    pub(crate) fn forget_idle(&mut self, slot: KeySlot) {
        let index = slot.index();
        let idle = matches!(
            self.entries.get(index),
            Some(Some(Entry {
                holding: 0,
                waiting: 0,
                ..
            }))
        );
        if !idle {
            return;
        }
        if let Some(Some(entry)) = self.entries.get_mut(index).map(Option::take) {
            self.index.remove(&entry.key);
        }
        self.free.push(index);
        while self.entries.last().is_some_and(Option::is_none) {
            self.entries.pop();
        }
        if self.entries.is_empty() {
            self.free.clear();
        }
        shrink(&mut self.entries);
        shrink(&mut self.free);
        if self.index.capacity() > FLOOR && self.index.len() * 4 <= self.index.capacity() {
            self.index.shrink_to((self.index.len() * 2).max(FLOOR));
        }
    }

    /// Entries the table's buffers have room for (test support).
    pub(crate) fn capacity(&self) -> usize {
        self.entries.capacity() + self.free.capacity() + self.index.capacity()
    }

    fn entry(&self, slot: KeySlot) -> Option<&Entry> {
        self.entries.get(slot.index())?.as_ref()
    }

    fn entry_mut(&mut self, slot: KeySlot) -> Option<&mut Entry> {
        self.entries.get_mut(slot.index())?.as_mut()
    }
}

fn shrink<T>(buffer: &mut Vec<T>) {
    if buffer.capacity() > FLOOR && buffer.len() * 4 <= buffer.capacity() {
        buffer.shrink_to((buffer.len() * 2).max(FLOOR));
    }
}
