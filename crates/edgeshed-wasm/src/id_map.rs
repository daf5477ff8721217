//! Registries keyed by the ids the JS layer hands out (tasks, timers,
//! awaited promises, held permits).
//!
//! An id crosses into JavaScript (a timer's argument, a promise reaction's
//! argument) and may come back late, after its entry is gone: so ids are
//! never reused. They count up from 0 as `u64` and travel as JavaScript
//! numbers, exact up to 2^53: at a million ids a second an isolate would
//! need 285 years to run out. Even then nothing aliases: a new entry never
//! replaces a live one (the counter skips ids still in use).

use std::collections::hash_map::Entry;
use std::collections::HashMap;

/// A hasher for sequential ids (multiplicative hashing: far cheaper than
/// SipHash, and ids are not attacker-chosen).
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl core::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*byte)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u64(&mut self, id: u64) {
        self.0 = id.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type IdMap<T> = HashMap<u64, T, core::hash::BuildHasherDefault<IdHasher>>;

/// The largest id that a JavaScript number holds exactly (2^53 - 1).
const MAX_ID: u64 = (1 << 53) - 1;

/// Capacity kept however empty a registry gets (no churn for small loads).
const MIN_CAPACITY: usize = 64;

/// Live entries under ids that are never handed out twice while in use.
pub(crate) struct Registry<T> {
    next: u64,
    live: IdMap<T>,
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Self {
            next: 0,
            live: IdMap::default(),
        }
    }
}

impl<T> Registry<T> {
    /// Stores `value` under a fresh id and returns the id.
    pub(crate) fn insert(&mut self, value: T) -> u64 {
        self.insert_with(|_| value)
    }

    /// Stores the value that `make` builds for its fresh id, and returns the id.
    pub(crate) fn insert_with(&mut self, make: impl FnOnce(u64) -> T) -> u64 {
        loop {
            let id = self.next;
            self.next = if id >= MAX_ID { 0 } else { id + 1 };
            if let Entry::Vacant(vacant) = self.live.entry(id) {
                vacant.insert(make(id));
                return id;
            }
        }
    }

    /// The entry under `id`, if live.
    pub(crate) fn get(&self, id: u64) -> Option<&T> {
        self.live.get(&id)
    }

    /// The entry under `id`, if live.
    pub(crate) fn get_mut(&mut self, id: u64) -> Option<&mut T> {
        self.live.get_mut(&id)
    }

    /// Whether `id` is live.
    pub(crate) fn contains(&self, id: u64) -> bool {
        self.live.contains_key(&id)
    }

    /// Removes and returns the entry under `id`. After a burst the map
    /// gives its memory back once it is three quarters empty.
    pub(crate) fn remove(&mut self, id: u64) -> Option<T> {
        let removed = self.live.remove(&id)?;
        let capacity = self.live.capacity();
        if capacity > MIN_CAPACITY && self.live.len() < capacity / 4 {
            self.live.shrink_to((self.live.len() * 2).max(MIN_CAPACITY));
        }
        Some(removed)
    }

    /// Removes every entry for which `expired` is true, and returns them
    /// (for the caller to drop outside any borrow).
    pub(crate) fn take_where(&mut self, mut expired: impl FnMut(&T) -> bool) -> Vec<T> {
        let ids: Vec<u64> = self
            .live
            .iter()
            .filter(|(_, value)| expired(value))
            .map(|(id, _)| *id)
            .collect();
        ids.into_iter().filter_map(|id| self.remove(id)).collect()
    }

    /// How many entries are live.
    pub(crate) fn len(&self) -> usize {
        self.live.len()
    }

    /// How many entries the map has room for (tests of memory after a burst).
    #[cfg(all(test, target_arch = "wasm32"))]
    pub(crate) fn capacity(&self) -> usize {
        self.live.capacity()
    }

    /// Test hook: the next id handed out (to test behaviour near 2^32).
    #[cfg(all(test, target_arch = "wasm32"))]
    pub(crate) fn set_next_id(&mut self, next: u64) {
        self.next = next;
    }
}

/// An id as the JavaScript number it travels as.
pub(crate) fn id_to_js(id: u64) -> f64 {
    id as f64
}

/// An id back from JavaScript: `None` unless an exact integer id.
pub(crate) fn id_from_js(value: f64) -> Option<u64> {
    (value.is_finite() && value >= 0.0 && value.fract() == 0.0 && value <= MAX_ID as f64)
        .then_some(value as u64)
}

#[cfg(all(test, target_arch = "wasm32"))]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test]
    fn ids_are_not_reused_past_2_pow_32() {
        let mut registry = Registry::default();
        let first = registry.insert("first");
        registry.set_next_id(u64::from(u32::MAX));
        let a = registry.insert("a");
        let b = registry.insert("b");
        assert_eq!(b, a + 1);
        assert_ne!(b, first);
        assert_eq!(registry.get(first), Some(&"first"));
    }

    #[wasm_bindgen_test]
    fn a_new_entry_never_replaces_a_live_one_even_after_the_counter_wraps() {
        let mut registry = Registry::default();
        let zero = registry.insert("zero");
        registry.set_next_id(MAX_ID);
        let last = registry.insert("last");
        let after = registry.insert("after");
        assert_eq!((zero, last, after), (0, MAX_ID, 1));
        assert_eq!(registry.get(0), Some(&"zero"));
    }

    #[wasm_bindgen_test]
    fn the_map_shrinks_back_after_a_burst() {
        let mut registry = Registry::default();
        let ids: Vec<u64> = (0..100_000).map(|i| registry.insert(i)).collect();
        let peak = registry.capacity();
        for id in ids.iter().skip(10) {
            registry.remove(*id);
        }
        assert_eq!(registry.len(), 10);
        assert!(
            registry.capacity() <= 4 * MIN_CAPACITY,
            "capacity {} after the burst (peak {peak})",
            registry.capacity()
        );
    }

    #[wasm_bindgen_test]
    fn ids_round_trip_through_javascript_numbers() {
        assert_eq!(id_from_js(id_to_js(MAX_ID)), Some(MAX_ID));
        assert_eq!(id_from_js(-1.0), None);
        assert_eq!(id_from_js(1.5), None);
        assert_eq!(id_from_js(f64::NAN), None);
    }
}
