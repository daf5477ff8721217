//! [`DigestHasher`]: the hasher of the maps keyed by [`Key`](super::Key).

use core::hash::Hasher;

/// The hasher of maps keyed by [`Key`](super::Key) (`HashMap<Key, _, DigestState>`).
///
/// A key's digest already is a keyed hash of its value under a secret the
/// client does not know, uniform in every bit, so the map uses it as it is
/// instead of hashing it again with the standard library's SipHash. A keyed
/// call looks its key up, inserts it and removes it again (three hashes):
/// SipHash over the digest was 8 % of a keyed `Limiter.run` (a CPU profile
/// of `run(fn, { criticality, key })`, benches/node/criticality.mjs).
#[derive(Default)]
pub(crate) struct DigestHasher(u64);

/// `BuildHasher` of [`DigestHasher`].
pub(crate) type DigestState = core::hash::BuildHasherDefault<DigestHasher>;

impl Hasher for DigestHasher {
    fn write_u64(&mut self, word: u64) {
        self.0 = self.0.rotate_left(32) ^ word;
    }

    // Only `Key::hash`'s words reach a map of keys; anything else is still
    // hashed (FNV-1a), never ignored.
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0 ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::DigestState;
    use crate::Key;
    use core::hash::BuildHasher;

    #[test]
    fn a_key_hashes_to_its_digest_words_and_other_input_still_counts() {
        let key = Key::from("tenant-42");
        let [high, low] = key.digest();
        assert_eq!(
            DigestState::default().hash_one(key),
            high.rotate_left(32) ^ low
        );
        let other = Key::from("tenant-43");
        assert_ne!(
            DigestState::default().hash_one(key),
            DigestState::default().hash_one(other)
        );
        assert_ne!(
            DigestState::default().hash_one("a"),
            DigestState::default().hash_one("b")
        );
    }
}
