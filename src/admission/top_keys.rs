//! The keys refused most often (`topRefusedKeys`), counted with the
//! space-saving algorithm (Metwally, Agrawal and El Abbadi, "Efficient
//! computation of frequent and top-k elements in data streams", 2005): a
//! fixed number of counters, so memory stays bounded however many keys an
//! attacker invents, and every key refused more often than
//! `refusals / CAPACITY` is sure to hold a counter.

use crate::sync::{lock, Mutex};
use crate::Key;

/// Counters kept; the top [`SHOWN`] of them are reported.
const CAPACITY: usize = 20;
/// Keys reported by [`TopRefused::top`].
pub(crate) const SHOWN: usize = 10;

/// One of the keys refused most often.
///
/// `refused` counts its refusals since its counter was taken over; the
/// space-saving algorithm may overcount a key by at most `overcount` (the
/// count of the key whose counter it took over), never undercount it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RefusedKey {
    /// The key (`None`: calls without a key, which share one).
    pub key: Option<Key>,
    /// Its refusals (an upper bound, see above).
    pub refused: u64,
    /// By how much `refused` may overcount.
    pub overcount: u64,
}

#[derive(Debug, Default)]
pub(crate) struct TopRefused {
    counters: Mutex<Vec<RefusedKey>>,
}

impl TopRefused {
    /// Counts one refusal of `key`.
    pub(crate) fn record(&self, key: Option<Key>) {
        let mut counters = lock(&self.counters);
        if let Some(counter) = counters.iter_mut().find(|c| c.key == key) {
            counter.refused += 1;
            return;
        }
        if counters.len() < CAPACITY {
            counters.push(RefusedKey {
                key,
                refused: 1,
                overcount: 0,
            });
            return;
        }
        // Full: the least counted counter goes to the new key, which
        // inherits its count (so it is never undercounted).
        if let Some(least) = counters.iter_mut().min_by_key(|c| c.refused) {
            *least = RefusedKey {
                key,
                refused: least.refused + 1,
                overcount: least.refused,
            };
        }
    }

    /// The [`SHOWN`] keys refused most often, most first.
    pub(crate) fn top(&self) -> Vec<RefusedKey> {
        let mut top = lock(&self.counters).clone();
        // Most first, ties in counter order: an insertion sort (stable, as
        // `sort_by_key` is) of at most CAPACITY counters. The standard
        // library's sort cost the npm package about 2 KiB of gzipped wasm
        // (measured with scripts/build-pkg.sh).
        for at in 1..top.len() {
            let mut to = at;
            while to > 0 && top.get(to - 1).map(|c| c.refused) < top.get(to).map(|c| c.refused) {
                top.swap(to - 1, to);
                to -= 1;
            }
        }
        top.truncate(SHOWN);
        top
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heavy_key_stays_on_top_of_a_flood_of_invented_keys() {
        let top = TopRefused::default();
        for round in 0..10_000u32 {
            top.record(Some(Key::from("abuser")));
            top.record(Some(Key::from(format!("invented-{round}").as_str())));
            if round % 4 == 0 {
                top.record(None);
            }
        }
        let shown = top.top();
        assert_eq!(shown.len(), SHOWN);
        let first = shown.first().copied();
        assert_eq!(first.and_then(|c| c.key), Some(Key::from("abuser")));
        assert!(first.is_some_and(|c| c.refused >= 10_000));
        assert!(
            shown.iter().any(|c| c.key.is_none()),
            "the keyless calls too"
        );
        assert!(lock(&top.counters).len() <= CAPACITY);
    }
}
