//! Maps keyed by the sequential `u32` ids the JS layer hands out (tasks,
//! timers, awaited promises, held permits).

use std::collections::HashMap;

/// A hasher for the sequential `u32` ids of tasks and timers (multiplicative
/// hashing: far cheaper than SipHash, and ids are not attacker-chosen).
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

    fn write_u32(&mut self, id: u32) {
        self.0 = u64::from(id).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// A map keyed by task or timer id.
pub(crate) type IdMap<T> = HashMap<u32, T, core::hash::BuildHasherDefault<IdHasher>>;
