//! Per-key counts for fair queueing: how many permits each key holds, how
//! many of its calls wait, its weight, when it was last served and how much
//! service it had lately (its recent grants, decayed).
//!
//! A call without a key belongs to one shared *keyless* key, which always
//! has the first slot: leaving the key out of a call makes it one more key,
//! never a way around the fair share. Its permits are not counted one by
//! one (they are taken on the lock-free path): what it holds is whatever is
//! out beyond the keyed permits. Any other key with neither a permit nor a
//! waiter is forgotten at once, so the table never holds more keys than
//! there are calls in flight or waiting.

use super::buffers::{shrink, FLOOR};
use crate::key::DigestState;
use crate::Key;
use core::num::NonZeroU32;
use std::collections::HashMap;

/// The largest weight a key may have.
pub(crate) const MAX_WEIGHT: u32 = 1000;

/// A key's entry in the table; valid while the key holds or waits for a
/// permit (the keyless key's always).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct KeySlot(NonZeroU32);

impl KeySlot {
    /// The keyless key's slot.
    pub(crate) const KEYLESS: KeySlot = KeySlot(NonZeroU32::MIN);

    /// Slot number `n` (1 is the keyless key's), for tests.
    #[cfg(test)]
    pub(crate) fn for_test(n: u32) -> Self {
        Self(NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN))
    }

    /// The slot's index in per-key tables.
    pub(crate) fn index(self) -> usize {
        (self.0.get() - 1) as usize
    }
}

#[derive(Debug)]
struct Entry {
    /// `None` for the keyless key.
    key: Option<Key>,
    /// Permits held (not counted for the keyless key).
    holding: usize,
    waiting: usize,
    weight: u32,
    /// The grant sequence number of its last grant from the queue.
    served: u64,
    /// Its recent grants as of grant `recent_at`, in units of
    /// [`RECENT_ONE`]: one per permit it took, halved every half-life of
    /// grants (see [`KeyTable::recent`]).
    recent: u64,
    recent_at: u64,
}

impl Entry {
    fn new(key: Option<Key>, weight: u32) -> Self {
        Self {
            key,
            holding: 0,
            waiting: 0,
            weight,
            served: 0,
            recent: 0,
            recent_at: 0,
        }
    }
}

#[derive(Debug)]
pub(crate) struct KeyTable {
    entries: Vec<Option<Entry>>,
    free: Vec<usize>,
    index: HashMap<Key, KeySlot, DigestState>,
    /// Permits held by keyed calls.
    keyed_holding: usize,
}

impl Default for KeyTable {
    fn default() -> Self {
        Self {
            entries: vec![Some(Entry::new(None, 1))],
            free: Vec::new(),
            index: HashMap::default(),
            keyed_holding: 0,
        }
    }
}

impl KeyTable {
    /// The slot of `key` (the keyless key's for `None`), made if needed with
    /// `weight` (an existing key takes the weight of its latest call). A new
    /// key counts nothing yet: the caller counts a permit or a wait at once,
    /// or calls [`forget_idle`](Self::forget_idle). `None` only if the table
    /// cannot grow (2^32 keys at once; the call then counts as keyless).
    pub(crate) fn slot(&mut self, key: Option<&Key>, weight: u32) -> Option<KeySlot> {
        let Some(key) = key else {
            return Some(KeySlot::KEYLESS);
        };
        let weight = weight.clamp(1, MAX_WEIGHT);
        if let Some(&slot) = self.index.get(key) {
            if let Some(entry) = self.entry_mut(slot) {
                entry.weight = weight;
            }
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
        *self.entries.get_mut(index)? = Some(Entry::new(Some(*key), weight));
        self.index.insert(*key, slot);
        Some(slot)
    }

    /// The slot of `key` (the keyless key's for `None`), if it is known.
    pub(crate) fn find(&self, key: Option<&Key>) -> Option<KeySlot> {
        match key {
            None => Some(KeySlot::KEYLESS),
            Some(key) => self.index.get(key).copied(),
        }
    }

    /// Keys holding or waiting for a permit, the keyless key among them if
    /// it holds `keyless_holding > 0` permits or has a waiter.
    pub(crate) fn active(&self, keyless_holding: usize) -> usize {
        let keyless = keyless_holding > 0 || self.waiting_of(KeySlot::KEYLESS) > 0;
        self.index.len() + usize::from(keyless)
    }

    /// Keyed keys holding or waiting (test support for the memory contract).
    pub(crate) fn keyed(&self) -> usize {
        self.index.len()
    }

    /// Calls of `slot`'s key waiting.
    pub(crate) fn waiting_of(&self, slot: KeySlot) -> usize {
        self.entry(slot).map_or(0, |entry| entry.waiting)
    }

    /// Permits held by keyed calls.
    pub(crate) fn keyed_holding(&self) -> usize {
        self.keyed_holding
    }

    /// Permits `slot`'s key holds (`keyless` for the keyless key).
    pub(crate) fn holding(&self, slot: KeySlot, keyless: usize) -> usize {
        if slot == KeySlot::KEYLESS {
            return keyless;
        }
        self.entry(slot).map_or(0, |entry| entry.holding)
    }

    /// `slot`'s key's weight.
    pub(crate) fn weight(&self, slot: KeySlot) -> u32 {
        self.entry(slot).map_or(1, |entry| entry.weight)
    }

    /// The grant sequence number of `slot`'s key's last grant.
    pub(crate) fn served(&self, slot: KeySlot) -> u64 {
        self.entry(slot).map_or(0, |entry| entry.served)
    }

    /// Records a grant from the queue to `slot`'s key, the `sequence`th.
    pub(crate) fn mark_served(&mut self, slot: KeySlot, sequence: u64) {
        if let Some(entry) = self.entry_mut(slot) {
            entry.served = sequence;
        }
    }

    /// Counts a permit taken by `slot`'s key as the `sequence`th grant,
    /// recent grants halved every `half_life` grants.
    pub(crate) fn add_recent(&mut self, slot: KeySlot, sequence: u64, half_life: u64) {
        let recent = self.recent(slot, sequence, half_life);
        if let Some(entry) = self.entry_mut(slot) {
            entry.recent = recent.saturating_add(RECENT_ONE);
            entry.recent_at = sequence;
        }
    }

    /// `slot`'s key's recent grants (in units of [`RECENT_ONE`]) when
    /// `sequence` grants were made: each counts one, halved every
    /// `half_life` grants made since (to anyone), linearly in between. A
    /// key forgotten when idle starts again from none.
    pub(crate) fn recent(&self, slot: KeySlot, sequence: u64, half_life: u64) -> u64 {
        self.entry(slot).map_or(0, |entry| {
            decay(
                entry.recent,
                sequence.saturating_sub(entry.recent_at),
                half_life,
            )
        })
    }

    /// One more permit held (`by > 0`) or one fewer (`by < 0`) by `slot`'s
    /// key (nothing for the keyless key, whose permits are not counted).
    pub(crate) fn add_holding(&mut self, slot: KeySlot, by: isize) {
        if slot == KeySlot::KEYLESS {
            return;
        }
        let mut changed = false;
        if let Some(entry) = self.entry_mut(slot) {
            let before = entry.holding;
            entry.holding = entry.holding.saturating_add_signed(by);
            changed = entry.holding != before;
        }
        if changed {
            self.keyed_holding = self.keyed_holding.saturating_add_signed(by);
        }
        self.forget_idle(slot);
    }

    /// One more call of `slot`'s key waiting (`by > 0`) or one fewer (`by < 0`).
    pub(crate) fn add_waiting(&mut self, slot: KeySlot, by: isize) {
        if let Some(entry) = self.entry_mut(slot) {
            entry.waiting = entry.waiting.saturating_add_signed(by);
        }
        self.forget_idle(slot);
    }

    /// Forgets `slot`'s key if it neither holds nor waits for a permit (the
    /// keyless key is never forgotten).
    pub(crate) fn forget_idle(&mut self, slot: KeySlot) {
        let index = slot.index();
        let idle = slot != KeySlot::KEYLESS
            && matches!(
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
            if let Some(key) = entry.key {
                self.index.remove(&key);
            }
        }
        self.free.push(index);
        while self.entries.last().is_some_and(Option::is_none) {
            self.entries.pop();
        }
        if self.entries.len() <= 1 {
            self.free.clear();
        }
        shrink(&mut self.entries);
        shrink(&mut self.free);
        if self.index.capacity() > FLOOR && self.index.len() * 4 <= self.index.capacity() {
            self.index.shrink_to((self.index.len() * 2).max(FLOOR));
        }
    }

    /// Entries the table's buffers have room for beyond the keyless key's (test support).
    pub(crate) fn capacity(&self) -> usize {
        // The keyless entry is always there.
        self.entries.capacity().saturating_sub(1) + self.free.capacity() + self.index.capacity()
    }

    fn entry(&self, slot: KeySlot) -> Option<&Entry> {
        self.entries.get(slot.index())?.as_ref()
    }

    fn entry_mut(&mut self, slot: KeySlot) -> Option<&mut Entry> {
        self.entries.get_mut(slot.index())?.as_mut()
    }
}

/// One grant in a key's recent grants (fixed point: integer arithmetic
/// decides alike on every target and needs no floating-point library).
pub(crate) const RECENT_ONE: u64 = 1 << 16;

/// `value` after `since` grants: halved every `half_life` grants, and
/// linearly between two halvings (a piecewise-linear exponential decay).
pub(crate) fn decay(value: u64, since: u64, half_life: u64) -> u64 {
    let half_life = half_life.max(1);
    let halved = u32::try_from(since / half_life).unwrap_or(u32::MAX);
    let whole = value.checked_shr(halved).unwrap_or(0);
    // (saturating: only a key with some 2^40 recent grants could reach it)
    let part = (whole / 2).saturating_mul(since % half_life) / half_life;
    whole.saturating_sub(part)
}
