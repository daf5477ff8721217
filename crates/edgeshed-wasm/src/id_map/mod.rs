//! Registries keyed by the ids the JS layer hands out (tasks, timers,
//! awaited promises, held permits).
//!
//! An id crosses into JavaScript (a timer's argument, a promise reaction's
//! argument) and may come back late, after its entry is gone: so an id is
//! never handed out twice, and a stale id finds nothing. Ids travel as
//! JavaScript numbers, exact below 2^53.
//!
//! Entries live in a slab: an id is a slot index (its low [`INDEX_BITS`]
//! bits) and the slot's generation (the bits above), so a lookup is an index
//! and a compare, no hashing. A slot's generation goes up each time its entry
//! is removed; a slot whose generation is used up is retired for good
//! instead of being reused. A stale id therefore never aliases: its
//! generation no longer matches. The slab gives memory back after a burst
//! (see [`Registry::remove`]); slots cut off its end are recreated above
//! every generation they ever had.
//!
//! Past 2^24 slots (more live entries than a wasm32 memory holds in
//! practice) the slab goes on growing, but the slots above get their ids from
//! an overflow map (ids from 2^52 up, counted up, never one still live), so
//! inserting can never fail. The map is not generic: one copy of its code
//! serves every registry.

mod overflow;
#[cfg(all(test, target_arch = "wasm32"))]
mod tests;

use overflow::Overflow;

/// Bits of an id that name the slot.
const INDEX_BITS: u32 = 24;
const INDEX_MASK: u64 = (1 << INDEX_BITS) - 1;
/// Slab ids are below this; overflow ids at or above it.
const SLAB_IDS: u64 = 1 << 52;
/// The last generation a slot may carry (a slab id stays below 2^52).
const MAX_GENERATION: u32 = (1 << (52 - INDEX_BITS)) - 1;
/// The largest id that a JavaScript number holds exactly (2^53 - 1).
const MAX_ID: u64 = (1 << 53) - 1;
/// Capacity kept however empty a registry gets (no churn for small loads).
const MIN_CAPACITY: usize = 64;

struct Slot<T> {
    /// The generation of the slot's next or current id; past
    /// [`MAX_GENERATION`] the slot is retired.
    generation: u32,
    value: Option<T>,
}

/// Live entries under ids that are never handed out twice.
pub(crate) struct Registry<T> {
    slots: Vec<Slot<T>>,
    /// Vacant slots to reuse, last freed first. May hold indices of slots
    /// cut off the end since, or listed twice: checked when popped.
    free: Vec<usize>,
    /// Live entries in the slab.
    live: usize,
    /// The generation a slot recreated at the end starts at: above every
    /// generation a slot cut off had reached.
    floor: u32,
    /// Slots below this have slab ids; the others overflow ids (lowered by
    /// tests of the overflow).
    index_limit: usize,
    overflow: Overflow,
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Self {
            slots: Vec::new(),
            free: Vec::new(),
            live: 0,
            floor: 0,
            index_limit: 1 << INDEX_BITS,
            overflow: Overflow::default(),
        }
    }
}

fn slab_id(generation: u32, index: usize) -> u64 {
    (u64::from(generation) << INDEX_BITS) | index as u64
}

impl<T> Registry<T> {
    /// Stores `value` under a fresh id and returns the id.
    pub(crate) fn insert(&mut self, value: T) -> u64 {
        self.insert_with(|_| value)
    }

    /// Stores the value that `make` builds for its fresh id, and returns the id.
    pub(crate) fn insert_with(&mut self, make: impl FnOnce(u64) -> T) -> u64 {
        let index = self.vacant_slot();
        let id = if index < self.index_limit {
            let generation = self
                .slots
                .get(index)
                .map_or(self.floor, |slot| slot.generation);
            slab_id(generation, index)
        } else {
            self.overflow.insert(index)
        };
        let value = Some(make(id));
        match self.slots.get_mut(index) {
            Some(slot) => slot.value = value,
            None => self.slots.push(Slot {
                generation: self.floor,
                value,
            }),
        }
        self.live += 1;
        id
    }

    /// A vacant slot that may take an entry: a freed one, or the next one
    /// past the end (`slots.len()`, not pushed yet).
    fn vacant_slot(&mut self) -> usize {
        while let Some(index) = self.free.pop() {
            if self
                .slots
                .get(index)
                .is_some_and(|slot| slot.value.is_none() && slot.generation <= MAX_GENERATION)
            {
                return index;
            }
        }
        self.slots.len()
    }

    /// The slot of `id`, if the id is its current one.
    fn index_of(&self, id: u64) -> Option<usize> {
        if id >= SLAB_IDS {
            return self.overflow.index(id);
        }
        let index = (id & INDEX_MASK) as usize;
        let slot = self.slots.get(index)?;
        (index < self.index_limit && u64::from(slot.generation) == id >> INDEX_BITS)
            .then_some(index)
    }

    /// The entry under `id`, if live.
    pub(crate) fn get(&self, id: u64) -> Option<&T> {
        self.slots.get(self.index_of(id)?)?.value.as_ref()
    }

    /// The entry under `id`, if live.
    pub(crate) fn get_mut(&mut self, id: u64) -> Option<&mut T> {
        let index = self.index_of(id)?;
        self.slots.get_mut(index)?.value.as_mut()
    }

    /// Whether `id` is live.
    pub(crate) fn contains(&self, id: u64) -> bool {
        self.get(id).is_some()
    }

    /// Removes and returns the entry under `id`. After a burst the slab
    /// gives its memory back once it is three quarters empty.
    pub(crate) fn remove(&mut self, id: u64) -> Option<T> {
        let index = self.index_of(id)?;
        let slot = self.slots.get_mut(index)?;
        let value = slot.value.take()?;
        if id >= SLAB_IDS {
            self.overflow.remove(id);
            self.free.push(index);
        } else {
            // The id is spent: the slot's next entry gets a new one, or the
            // slot retires once its generations are used up.
            slot.generation = slot.generation.saturating_add(1);
            if slot.generation <= MAX_GENERATION {
                self.free.push(index);
            }
        }
        self.live -= 1;
        self.release_memory();
        Some(value)
    }

    /// Cuts vacant slots off the end and shrinks the buffers once they are
    /// at most a quarter full.
    fn release_memory(&mut self) {
        while let Some(last) = self.slots.last() {
            // A retired slot stays: recreating it could repeat an id.
            if last.value.is_some() || last.generation > MAX_GENERATION {
                break;
            }
            self.floor = self.floor.max(last.generation);
            self.slots.pop();
        }
        let len = self.slots.len();
        if self.live == 0 && len == 0 {
            self.free.clear();
        } else if self.free.len() > 2 * len + MIN_CAPACITY {
            self.free.retain(|&index| index < len);
        }
        if self.slots.capacity() > MIN_CAPACITY && len * 4 <= self.slots.capacity() {
            self.slots.shrink_to((len * 2).max(MIN_CAPACITY));
        }
        let entries = self.free.len();
        if self.free.capacity() > MIN_CAPACITY && entries * 4 <= self.free.capacity() {
            self.free.shrink_to((entries * 2).max(MIN_CAPACITY));
        }
    }

    /// Removes every entry for which `expired` is true, and returns them
    /// (for the caller to drop outside any borrow).
    pub(crate) fn take_where(&mut self, mut expired: impl FnMut(&T) -> bool) -> Vec<T> {
        let ids: Vec<u64> = self
            .live_ids()
            .into_iter()
            .filter(|id| self.get(*id).is_some_and(&mut expired))
            .collect();
        ids.into_iter().filter_map(|id| self.remove(id)).collect()
    }

    /// The ids of the live entries.
    fn live_ids(&self) -> Vec<u64> {
        let mut ids: Vec<u64> = self
            .slots
            .iter()
            .take(self.index_limit)
            .enumerate()
            .filter(|(_, slot)| slot.value.is_some())
            .map(|(index, slot)| slab_id(slot.generation, index))
            .collect();
        ids.extend(self.overflow.ids());
        ids
    }

    /// How many entries are live.
    pub(crate) fn len(&self) -> usize {
        self.live
    }

    /// How many entries the registry has room for (tests of memory after a burst).
    #[cfg(all(test, target_arch = "wasm32"))]
    pub(crate) fn capacity(&self) -> usize {
        self.slots.capacity()
    }

    /// Test hook: ages every vacant slot (and the slots made later) by
    /// `generations`, so that the next ids are far from the live ones.
    #[cfg(all(test, target_arch = "wasm32"))]
    pub(crate) fn skip_generations(&mut self, generations: u32) {
        for slot in self.slots.iter_mut().filter(|slot| slot.value.is_none()) {
            slot.generation = slot.generation.saturating_add(generations);
        }
        self.floor = self.floor.saturating_add(generations).min(MAX_GENERATION);
    }

    /// Test hook: the ids of the live entries.
    #[cfg(all(test, target_arch = "wasm32"))]
    pub(crate) fn ids(&self) -> Vec<u64> {
        self.live_ids()
    }

    /// Test hook: at most `limit` slots, so that the overflow can be tested.
    #[cfg(all(test, target_arch = "wasm32"))]
    pub(crate) fn set_index_limit(&mut self, limit: usize) {
        self.index_limit = limit;
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
