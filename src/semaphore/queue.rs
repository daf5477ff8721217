//! [`Queue`]: the state behind the semaphore's lock — the waiters, the
//! limit and its debt, the reserve's keeps, the per-key counts and codel's
//! standing-queue clock — and the choice of whom to serve next.

use super::keys::KeyTable;
use super::waiters::{Tag, Waiters};
use crate::criticality::{Criticality, Reserve};
use crate::time::Instant;

pub(super) struct Queue {
    pub(super) waiters: Waiters,
    /// The configured number of permits.
    pub(super) limit: usize,
    /// Permits still out that must be retired (not reused) when they come
    /// back, because the limit was lowered.
    pub(super) debt: usize,
    pub(super) reserve: Reserve,
    /// Free permits each rank must leave (sheddable, default, critical).
    keeps: [usize; 3],
    pub(super) keys: KeyTable,
    /// When the current queue started (it was empty before); `None` while empty.
    pub(super) standing_since: Option<Instant>,
    /// Serve the newest waiter first (codel's adaptive LIFO) until the queue drains.
    pub(super) newest_first: bool,
    /// Permits handed to waiters that have not picked them up, per rank.
    pub(super) handed: [usize; 3],
}

impl Queue {
    pub(super) fn new(limit: usize) -> Self {
        Self {
            waiters: Waiters::default(),
            limit,
            debt: 0,
            reserve: Reserve::NONE,
            keeps: [0; 3],
            keys: KeyTable::default(),
            standing_since: None,
            newest_first: false,
            handed: [0; 3],
        }
    }

    /// Permits of `rank` handed to waiters that have not picked them up.
    pub(super) fn handed(&self, rank: Criticality) -> usize {
        self.handed.get(rank.index()).copied().unwrap_or(0)
    }

    /// A permit handed to a waiter of `rank` was picked up or passed on.
    pub(super) fn unhand(&mut self, rank: Criticality) {
        if let Some(handed) = self.handed.get_mut(rank.index()) {
            *handed = handed.saturating_sub(1);
        }
    }

    /// Whether releases must take the lock.
    pub(super) fn needs_slow(&self) -> bool {
        self.waiters.len() > 0 || self.debt > 0
    }

    /// Free permits a `rank` call must leave for more critical ones.
    pub(super) fn keep(&self, rank: Criticality) -> usize {
        let [sheddable, default, critical] = self.keeps;
        match rank {
            Criticality::Sheddable => sheddable,
            Criticality::Default => default,
            Criticality::Critical => critical,
        }
    }

    pub(super) fn set_limit(&mut self, limit: usize) {
        self.limit = limit;
        self.update_keeps();
    }

    pub(super) fn reserve(&self) -> Reserve {
        self.reserve
    }

    pub(super) fn update_keeps(&mut self) {
        let keep = |rank| self.reserve.keep(self.limit, rank);
        self.keeps = [keep(Criticality::Sheddable), keep(Criticality::Default), 0];
    }

    /// The waiter of `rank` to serve next: in serve order, the first whose
    /// key holds less than its fair share (or that has no key) while keys
    /// wait; otherwise simply the first.
    pub(super) fn pick(&self, rank: Criticality) -> Option<usize> {
        let newest_first = self.newest_first;
        if self.keys.waiting() > 0 {
            let limit = self.limit;
            let fair = self.waiters.find(rank, newest_first, |tag| {
                tag.key
                    .is_none_or(|slot| self.keys.under_share(slot, limit))
            });
            if fair.is_some() {
                return fair;
            }
        }
        self.waiters.find(rank, newest_first, |_| true)
    }

    /// After a waiter left the queue: a drained queue is no standing queue.
    pub(super) fn after_removal(&mut self) {
        if self.waiters.len() == 0 {
            self.standing_since = None;
            self.newest_first = false;
        }
    }

    /// A waiter that stops waiting without a permit (its own timeout, drop
    /// or close) leaves its key's count.
    pub(super) fn left(&mut self, tag: Tag) {
        if let Some(slot) = tag.key {
            self.keys.add_waiting(slot, -1);
        }
        self.after_removal();
    }
}
