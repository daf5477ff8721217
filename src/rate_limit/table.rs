//! [`RateTable`]: one TAT per key, at most `max_keys` of them, evicted
//! losslessly; and the unkeyed calls' TAT.

use super::gcra::{Conforming, Gcra};
use super::Rate;
use core::hash::Hash;
use std::collections::HashMap;

/// Why a check failed: the key is over its rate, or it is new and the
/// table is full of keys still limited. Both carry the earliest time (ns)
/// at which the call could be allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Refusal {
    OverRate(u64),
    TableFull(u64),
}

/// The per-key state of a rate limit, without a clock: every method takes
/// the time (ns) of the call.
#[derive(Debug)]
pub(super) struct RateTable<K> {
    gcra: Gcra,
    max_keys: usize,
    tats: HashMap<K, u64>,
    /// The unkeyed calls' TAT.
    unkeyed: Option<u64>,
    /// No tracked key recovers before this time: a lower bound of the
    /// smallest TAT in `tats` (exact after a sweep; TATs only grow until the
    /// next one, and each insert lowers it if needed). Until then, a sweep
    /// would find nothing to drop, so a full table refuses without one.
    next_recovery: u64,
}

impl<K: Hash + Eq + Clone> RateTable<K> {
    pub(super) fn new(rate: &Rate) -> Self {
        Self {
            gcra: Gcra::new(rate.interval_nanos(), rate.burst()),
            max_keys: rate.max_keys(),
            tats: HashMap::new(),
            unkeyed: None,
            next_recovery: u64::MAX,
        }
    }

    /// Keys tracked right now.
    pub(super) fn keys(&self) -> usize {
        self.tats.len()
    }

    /// Checks (and on success counts) one call of `key` (`None`: unkeyed) at `now`.
    pub(super) fn check(&mut self, key: Option<&K>, now: u64) -> Result<Conforming, Refusal> {
        let gcra = self.gcra;
        let Some(key) = key else {
            let ok = gcra.check(self.unkeyed, now).map_err(Refusal::OverRate)?;
            self.unkeyed = Some(ok.tat);
            return Ok(ok);
        };
        if let Some(tat) = self.tats.get_mut(key) {
            let ok = gcra.check(Some(*tat), now).map_err(Refusal::OverRate)?;
            *tat = ok.tat;
            return Ok(ok);
        }
        // A new key conforms (no state), if there is room for it.
        let ok = gcra.check(None, now).map_err(Refusal::OverRate)?;
        self.insert(key, ok.tat, now)?;
        Ok(ok)
    }

    /// Reserves the first time at or after `now`, at most `max_wait` (ns)
    /// ahead, at which a call of `key` conforms; returns that time.
    pub(super) fn reserve(
        &mut self,
        key: Option<&K>,
        now: u64,
        max_wait: u64,
    ) -> Result<u64, Refusal> {
        let gcra = self.gcra;
        let Some(key) = key else {
            let (tat, at) = gcra
                .reserve(self.unkeyed, now, max_wait)
                .map_err(Refusal::OverRate)?;
            self.unkeyed = Some(tat);
            return Ok(at);
        };
        if let Some(tat) = self.tats.get_mut(key) {
            let (next, at) = gcra
                .reserve(Some(*tat), now, max_wait)
                .map_err(Refusal::OverRate)?;
            *tat = next;
            return Ok(at);
        }
        let (tat, at) = gcra
            .reserve(None, now, max_wait)
            .map_err(Refusal::OverRate)?;
        self.insert(key, tat, now)?;
        Ok(at)
    }

    /// Gives back a reservation that will not be used.
    pub(super) fn refund(&mut self, key: Option<&K>) {
        let gcra = self.gcra;
        let tat = match key {
            None => self.unkeyed.as_mut(),
            Some(key) => self.tats.get_mut(key),
        };
        if let Some(tat) = tat {
            *tat = gcra.refund(*tat);
        }
    }

    /// Tracks `key` with `tat`, dropping recovered keys first if the table
    /// is full; refuses the key if every tracked one is still limited.
    fn insert(&mut self, key: &K, tat: u64, now: u64) -> Result<(), Refusal> {
        if self.tats.len() >= self.max_keys {
            self.sweep(now);
            if self.tats.len() >= self.max_keys {
                return Err(Refusal::TableFull(self.next_recovery));
            }
        }
        self.tats.insert(key.clone(), tat);
        self.next_recovery = self.next_recovery.min(tat);
        Ok(())
    }

    /// Drops every key whose state has fully recovered (`TAT ≤ now`, the
    /// same as no state); recomputes when the next one will.
    fn sweep(&mut self, now: u64) {
        if now < self.next_recovery {
            return;
        }
        self.tats.retain(|_, tat| *tat > now);
        self.next_recovery = self.tats.values().copied().min().unwrap_or(u64::MAX);
    }
}
