//! [`Key`]: who a call is for, for per-key fair queueing and rate limits.
//!
//! A key is a keyed 128-bit hash of the *whole* value (SipHash-1-3 under a
//! secret of the process or, on wasm, of the isolate), plus the value's
//! first bytes for people to read. So two values that differ anywhere are
//! two keys (a header cut at some length would merge every value that shares
//! its first bytes, and let a client send a victim's prefix on purpose), a
//! client that does not know the secret cannot make two values collide, and
//! every key costs the same few bytes however long its value.

use core::fmt;
use core::hash::{Hash, Hasher};
// Not `crate::sync`: loom models the semaphore, not this set-once secret.
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use siphasher::sip128::{Hasher128, SipHasher13};

mod hasher;
pub(crate) use hasher::DigestState;

/// How many of a value's first bytes a key keeps to be shown in stats.
const SHOWN_BYTES: usize = Key::SHOWN_BYTES;

/// The secret every key of this process (this wasm instance) is hashed
/// with, and whether it is set (`UNSET`, `SETTING`, `SET`). Two words and a
/// flag rather than a `OnceLock`, whose `Once` machinery (with the
/// standard library's `RandomState` behind it) cost the npm package's wasm
/// about 1.2 KB (measured by function sizes, `BENCHMARKS.md` "Sizes").
static SECRET: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
static SECRET_STATE: AtomicUsize = AtomicUsize::new(UNSET);
const UNSET: usize = 0;
const SETTING: usize = 1;
const SET: usize = 2;

/// Who a call is for — a tenant, an API key, a client address — for the
/// per-key fair queueing of an [`Admission`](crate::admission::Admission)
/// and for per-key [rate limits](crate::rate_limit).
///
/// Two keys are the same key when their values are equal (exactly: a keyed
/// 128-bit hash of the whole value decides, see the module docs). A key is
/// `Copy` and of fixed size, however long its value; it keeps the value's
/// first [`SHOWN_BYTES`](Key::SHOWN_BYTES) bytes to be shown ([`shown`](Key::shown)), never
/// the whole value.
///
/// ```
/// use edgeshed::Key;
///
/// let tenant = Key::from("tenant-42");
/// assert_eq!(tenant, Key::from(String::from("tenant-42")));
/// assert_eq!(tenant.shown(), "tenant-42");
///
/// // Values that share a long prefix are still different keys.
/// let prefix = "x".repeat(300);
/// assert_ne!(Key::from(format!("{prefix}a")), Key::from(format!("{prefix}b")));
/// assert_eq!(Key::from(format!("{prefix}a")).shown(), "x".repeat(16));
/// ```
#[derive(Clone, Copy)]
pub struct Key {
    digest: [u64; 2],
    shown: [u8; SHOWN_BYTES],
    /// Bytes of `shown` in use; the top bit says the value was longer.
    shown_len: u8,
}

/// Set in `shown_len` when the value had more than the bytes shown.
const CUT: u8 = 0x80;

impl Key {
    /// How many of a value's first bytes a key keeps to be shown.
    pub const SHOWN_BYTES: usize = 16;

    /// The key of `value` (any bytes).
    pub fn from_bytes(value: &[u8]) -> Self {
        let [k0, k1] = secret();
        let mut hasher = SipHasher13::new_with_keys(k0, k1);
        hasher.write(value);
        let digest = hasher.finish128();
        let mut shown = [0; SHOWN_BYTES];
        let mut len = value.len().min(SHOWN_BYTES);
        // Shown as text: cut at a character boundary when the value is UTF-8.
        if let Ok(text) = core::str::from_utf8(value) {
            while !text.is_char_boundary(len) {
                len -= 1;
            }
        }
        for (to, from) in shown.iter_mut().zip(value.iter().take(len)) {
            *to = *from;
        }
        let cut = if value.len() > len { CUT } else { 0 };
        Self {
            digest: [digest.h1, digest.h2],
            shown,
            // `len` is at most SHOWN_BYTES (16): it fits in the low bits.
            shown_len: len as u8 | cut,
        }
    }

    /// The value's first bytes (at most [`SHOWN_BYTES`](Key::SHOWN_BYTES), cut at a character
    /// boundary), for people: stats and logs. Not the key's identity.
    pub fn shown(&self) -> &str {
        let len = usize::from(self.shown_len & !CUT);
        let bytes = self.shown.get(..len).unwrap_or_default();
        match core::str::from_utf8(bytes) {
            Ok(text) => text,
            // Not UTF-8: the longest valid start.
            Err(error) => bytes
                .get(..error.valid_up_to())
                .and_then(|valid| core::str::from_utf8(valid).ok())
                .unwrap_or_default(),
        }
    }

    /// Whether the value was longer than what [`shown`](Key::shown) gives.
    pub fn is_cut(&self) -> bool {
        self.shown_len & CUT != 0
    }

    /// The key's 128-bit keyed hash, as two words (its identity).
    pub fn digest(&self) -> [u64; 2] {
        self.digest
    }

    /// Sets the secret keys are hashed with, before the first key is made.
    ///
    /// On native targets the secret comes from the operating system's
    /// randomness (through the standard library's `RandomState`), and nothing
    /// needs to call this. On `wasm32-unknown-unknown` the standard library
    /// has no randomness, so the JS bindings call it with 16 bytes of
    /// `crypto.getRandomValues` before their first key. Returns `false` (and
    /// changes nothing) when a secret was already in use.
    pub fn set_secret(secret: [u8; 16]) -> bool {
        let word = |at: usize| {
            let bytes = secret
                .get(at..at + 8)
                .and_then(|b| <[u8; 8]>::try_from(b).ok());
            bytes.map_or(0, u64::from_le_bytes)
        };
        install([word(0), word(8)])
    }

    /// Whether a secret is in use yet (see [`set_secret`](Key::set_secret)).
    pub fn has_secret() -> bool {
        SECRET_STATE.load(Ordering::Acquire) == SET
    }
}

/// Installs `secret` if none is in use; whether it did.
fn install(secret: [u64; 2]) -> bool {
    let claimed =
        SECRET_STATE.compare_exchange(UNSET, SETTING, Ordering::AcqRel, Ordering::Acquire);
    if claimed.is_err() {
        return false;
    }
    for (word, value) in SECRET.iter().zip(secret) {
        word.store(value, Ordering::Relaxed);
    }
    SECRET_STATE.store(SET, Ordering::Release);
    true
}

/// The process's secret, made on first use (see [`Key::set_secret`]).
fn secret() -> [u64; 2] {
    while SECRET_STATE.load(Ordering::Acquire) != SET {
        // Another thread may be installing one: one of us wins, both read it.
        install(default_secret());
    }
    [
        SECRET[0].load(Ordering::Relaxed),
        SECRET[1].load(Ordering::Relaxed),
    ]
}

/// The secret of a process that set none: two outputs of one randomly keyed
/// SipHash, 128 bits that nobody outside the process can predict.
#[cfg(not(target_arch = "wasm32"))]
fn default_secret() -> [u64; 2] {
    use std::hash::BuildHasher;
    let state = std::collections::hash_map::RandomState::new();
    [state.hash_one(0x5eed_u64), state.hash_one(0xc0ffee_u64)]
}

/// `wasm32-unknown-unknown` has no randomness of its own: an embedding sets
/// the secret first ([`Key::set_secret`]; edgeshed's npm package and
/// gateway do, from WebCrypto). Without it, keys fall back to this fixed
/// secret — still whole-value and fixed-size, but then a client that knows
/// the secret could make two values collide.
#[cfg(target_arch = "wasm32")]
fn default_secret() -> [u64; 2] {
    [0x6564_6765_7368_6564, 0x6b65_7973_6563_7265]
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.digest == other.digest
    }
}

impl Eq for Key {}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // The two words alone, no length prefix: what `DigestHasher` expects.
        state.write_u64(self.digest[0]);
        state.write_u64(self.digest[1]);
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        self.digest.cmp(&other.digest)
    }
}

impl From<&str> for Key {
    fn from(text: &str) -> Self {
        Self::from_bytes(text.as_bytes())
    }
}

impl From<String> for Key {
    fn from(text: String) -> Self {
        Self::from(text.as_str())
    }
}

impl From<&String> for Key {
    fn from(text: &String) -> Self {
        Self::from(text.as_str())
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({self})")
    }
}

impl fmt::Display for Key {
    /// The shown bytes, with `…` when the value was longer.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.shown())?;
        if self.is_cut() {
            f.write_str("…")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_with_a_shared_prefix_stay_apart() {
        let jwt = |tail: &str| format!("Bearer eyJ{}.{tail}", "A".repeat(300));
        assert_ne!(Key::from(jwt("alice")), Key::from(jwt("bob")));
        assert_eq!(Key::from(jwt("alice")), Key::from(jwt("alice")));
        assert!(Key::from(jwt("alice")).is_cut());
        assert_eq!(Key::from(jwt("alice")).shown(), "Bearer eyJAAAAAA");
    }

    #[test]
    fn a_key_is_fixed_size_whatever_its_value() {
        assert!(core::mem::size_of::<Key>() <= 40);
        let long = Key::from("k".repeat(16 * 1024));
        assert_eq!(long.shown().len(), SHOWN_BYTES);
    }

    #[test]
    fn shown_bytes_cut_at_a_character_boundary() {
        let key = Key::from("ééééééééé"); // 18 bytes
        assert_eq!(key.shown(), "éééééééé");
        assert_eq!(format!("{key}"), "éééééééé…");
        assert_eq!(Key::from_bytes(&[0xff, b'a']).shown(), "");
    }
}
