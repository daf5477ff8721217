//! [`RateTable`]: one TAT per key, at most `max_keys` of them, evicted
//! losslessly; the unkeyed calls' TAT; and the overflow allowance that keys
//! share while the table is full of keys still limited.
//!
//! # A full table degrades, never locks out
//! Only a key that has fully recovered (`TAT ≤ now`, the same as no state)
//! is ever dropped, so churn never hands a limited key a fresh allowance.
//! When every tracked key is still limited, a new key is not tracked: it is
//! decided by the one *overflow* allowance (same rate and burst as a key)
//! that all such keys share. Keys in the table are never affected by it.
//!
//! **The rule for a key entering the table** (when a slot is free, or frees):
//! while the overflow allowance is still limited (its TAT is after now), the
//! key starts from the overflow allowance's TAT instead of no state. The
//! table keeps no memory of which keys used the overflow allowance (that
//! memory would be unbounded), so every untracked key is taken to be one
//! that may have. This is exact enough: a key's own TAT, had it been tracked,
//! can be no later than the shared one (the shared one counted the key's
//! calls and others'), so starting there never gives a key more than it
//! would have had, and it cannot make overflow calls and then a fresh burst
//! once a slot frees. Once the overflow allowance has recovered, starting
//! from it equals starting fresh. The cost: until then, a new key (a
//! legitimate one too) has what the overflow allowance has left, the same
//! as while the table is full; that is the degraded mode.

use super::gcra::{Conforming, Gcra};
use super::recovery::{Due, Recoveries};
use super::Rate;
use core::hash::Hash;
use std::collections::HashMap;

/// Which allowance decided a call: what a refund gives its turn back to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Cell {
    /// The unkeyed calls' allowance.
    Unkeyed,
    /// A tracked key's, of this generation of its entry (a key dropped and
    /// tracked again gets a new one, so a refund never credits the new entry).
    Key(u64),
    /// The overflow allowance.
    Overflow,
}

/// Why a check failed, with the earliest time (ns) the call could be allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Refusal {
    /// A tracked key (or the unkeyed calls) over its rate.
    OverRate(u64),
    /// A key the full table could not track, refused by the overflow allowance.
    Overflow(u64),
    /// A key entering the table, refused by the overflow allowance's TAT it
    /// starts from (see the module's rule).
    Inherited(u64),
}

/// A tracked key's state.
#[derive(Clone, Copy, Debug)]
struct Entry {
    tat: u64,
    generation: u64,
    /// The time of its current entry in `recoveries` (≤ `tat`).
    scheduled: u64,
}

/// The per-key state of a rate limit, without a clock: every method takes
/// the time (ns) of the call.
#[derive(Debug)]
pub(super) struct RateTable<K> {
    gcra: Gcra,
    max_keys: usize,
    entries: HashMap<K, Entry>,
    /// When each tracked key may have recovered, earliest first.
    recoveries: Recoveries<K>,
    next_generation: u64,
    /// The unkeyed calls' TAT.
    unkeyed: Option<u64>,
    /// The overflow allowance's TAT.
    overflow: Option<u64>,
    /// Entries of `recoveries` looked at by sweeps (the sweep's cost, for tests).
    #[cfg(test)]
    examined: u64,
}

impl<K: Hash + Eq + Clone> RateTable<K> {
    pub(super) fn new(rate: &Rate) -> Self {
        Self {
            gcra: Gcra::new(rate.interval_nanos(), rate.burst()),
            max_keys: rate.max_keys(),
            entries: HashMap::new(),
            recoveries: Recoveries::new(),
            next_generation: 0,
            unkeyed: None,
            overflow: None,
            #[cfg(test)]
            examined: 0,
        }
    }

    /// Keys tracked right now.
    pub(super) fn keys(&self) -> usize {
        self.entries.len()
    }

    /// Checks (and on success counts) one call of `key` (`None`: unkeyed) at `now`.
    pub(super) fn check(
        &mut self,
        key: Option<&K>,
        now: u64,
    ) -> Result<(Conforming, Cell), Refusal> {
        let gcra = self.gcra;
        let Some(key) = key else {
            let ok = gcra.check(self.unkeyed, now).map_err(Refusal::OverRate)?;
            self.unkeyed = Some(ok.tat);
            return Ok((ok, Cell::Unkeyed));
        };
        if let Some(entry) = self.entries.get_mut(key) {
            let ok = gcra
                .check(Some(entry.tat), now)
                .map_err(Refusal::OverRate)?;
            entry.tat = ok.tat;
            return Ok((ok, Cell::Key(entry.generation)));
        }
        if self.has_room(now) {
            let ok = gcra
                .check(self.inherited(now), now)
                .map_err(Refusal::Inherited)?;
            let generation = self.insert(key, ok.tat);
            return Ok((ok, Cell::Key(generation)));
        }
        let ok = gcra.check(self.overflow, now).map_err(Refusal::Overflow)?;
        self.overflow = Some(ok.tat);
        Ok((ok, Cell::Overflow))
    }

    /// Reserves the first time at or after `now`, at most `max_wait` (ns)
    /// ahead, at which a call of `key` conforms; returns that time.
    pub(super) fn reserve(
        &mut self,
        key: Option<&K>,
        now: u64,
        max_wait: u64,
    ) -> Result<(u64, Cell), Refusal> {
        let gcra = self.gcra;
        let Some(key) = key else {
            let (tat, at) = gcra
                .reserve(self.unkeyed, now, max_wait)
                .map_err(Refusal::OverRate)?;
            self.unkeyed = Some(tat);
            return Ok((at, Cell::Unkeyed));
        };
        if let Some(entry) = self.entries.get_mut(key) {
            let (tat, at) = gcra
                .reserve(Some(entry.tat), now, max_wait)
                .map_err(Refusal::OverRate)?;
            entry.tat = tat;
            return Ok((at, Cell::Key(entry.generation)));
        }
        if self.has_room(now) {
            let (tat, at) = gcra
                .reserve(self.inherited(now), now, max_wait)
                .map_err(Refusal::Inherited)?;
            let generation = self.insert(key, tat);
            return Ok((at, Cell::Key(generation)));
        }
        let (tat, at) = gcra
            .reserve(self.overflow, now, max_wait)
            .map_err(Refusal::Overflow)?;
        self.overflow = Some(tat);
        Ok((at, Cell::Overflow))
    }

    /// Gives back a reservation of `key` that will not be used, to the
    /// allowance that granted it (`cell`); nothing if that was a key's entry
    /// that has been dropped since (it had recovered: nothing to give back),
    /// even if the key is tracked again.
    pub(super) fn refund(&mut self, key: Option<&K>, cell: Cell) {
        let gcra = self.gcra;
        let tat = match (cell, key) {
            (Cell::Unkeyed, _) => self.unkeyed.as_mut(),
            (Cell::Overflow, _) => self.overflow.as_mut(),
            (Cell::Key(generation), Some(key)) => {
                self.refund_key(key, generation);
                return;
            }
            (Cell::Key(_), None) => None,
        };
        if let Some(tat) = tat {
            *tat = gcra.refund(*tat);
        }
    }

    fn refund_key(&mut self, key: &K, generation: u64) {
        let Some(entry) = self.entries.get_mut(key) else {
            return;
        };
        if entry.generation != generation {
            return;
        }
        entry.tat = self.gcra.refund(entry.tat);
        // Its scheduled time must stay a lower bound of its TAT, or a sweep
        // would keep a recovered key and refuse a new one.
        if entry.tat < entry.scheduled {
            entry.scheduled = entry.tat;
            self.recoveries.schedule(entry.tat, generation, key.clone());
            self.compact();
        }
    }

    /// The state a key entering the table starts from: the overflow
    /// allowance's while it is still limited (the module's rule), else none.
    fn inherited(&self, now: u64) -> Option<u64> {
        self.overflow.filter(|&tat| tat > now)
    }

    /// Whether a new key can be tracked: a slot is free, or a sweep freed one.
    fn has_room(&mut self, now: u64) -> bool {
        if self.entries.len() >= self.max_keys {
            self.sweep(now);
        }
        self.entries.len() < self.max_keys
    }

    /// Tracks `key` with `tat` (there is room); returns its generation.
    fn insert(&mut self, key: &K, tat: u64) -> u64 {
        let generation = self.next_generation;
        self.next_generation = generation.wrapping_add(1);
        let entry = Entry {
            tat,
            generation,
            scheduled: tat,
        };
        self.entries.insert(key.clone(), entry);
        self.recoveries.schedule(tat, generation, key.clone());
        generation
    }

    /// Drops recovered keys (`TAT ≤ now`, the same as no state) until one
    /// slot is free or no key can have recovered: takes out only entries
    /// that are due, each paid for by an earlier operation
    /// ([`Recoveries`]), so amortised O(log n) per call.
    fn sweep(&mut self, now: u64) {
        while self.entries.len() >= self.max_keys {
            let Some(Due {
                at,
                generation,
                key,
            }) = self.recoveries.pop_due(now)
            else {
                return;
            };
            #[cfg(test)]
            {
                self.examined += 1;
            }
            let Some(entry) = self.entries.get_mut(&key) else {
                continue; // stale: its key is gone
            };
            if entry.generation != generation || entry.scheduled != at {
                continue; // stale: replaced by a refund's, or of an older entry
            }
            if entry.tat <= now {
                self.entries.remove(&key);
            } else {
                entry.scheduled = entry.tat;
                self.recoveries.schedule(entry.tat, generation, key);
            }
        }
    }

    /// Keeps stale entries (one per refund below a key's schedule) to at
    /// most as many as current ones: rebuilt in O(n) once they outnumber
    /// them, so O(1) per refund amortised.
    fn compact(&mut self) {
        if self.recoveries.len() <= 2 * self.entries.len() + 64 {
            return;
        }
        let current = self.entries.iter().map(|(key, entry)| Due {
            at: entry.scheduled,
            generation: entry.generation,
            key: key.clone(),
        });
        self.recoveries.rebuild(current);
    }

    /// Entries looked at by sweeps so far.
    #[cfg(test)]
    pub(super) fn examined(&self) -> u64 {
        self.examined
    }
}

#[cfg(test)]
#[path = "table_tests.rs"]
mod tests;
