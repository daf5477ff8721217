//! Calls the table keeps: asks it cannot grant yet, and watches. Together
//! they let a request that finds the budget leased out but unused elsewhere
//! get a permit within a few round trips, without polling.
//!
//! - **Kept asks.** A holder that needs more than the table can give now
//!   says how long its waiting requests can wait
//!   ([`LeaseRequest::wait_ms`]). The table grants what it can at once (the
//!   lease is renewed then, as by any request) and keeps the ask. Whenever
//!   permits may have come back, the shell calls
//!   [`LeaseTable::answer_parked`], which serves the kept asks in the order
//!   they came, each up to its fair share; an ask is answered when it got
//!   more than it had, or when its time is up (with what it has).
//! - **Watches.** A holder with permits keeps a watch at the table until its
//!   renewal ([`LeaseTable::watch`]). When an ask has to be kept (a holder
//!   waits for its fair share), every watch that believes the budget
//!   uncontended is answered, so holders with permits they do not use give
//!   them back at once instead of at their renewal; and when permits are
//!   free, holders that wanted more than they got are told to ask again. A
//!   watch changes no lease: it is a notice only.

use super::LeaseTable;
use crate::budget::types::{Answer, Grant, LeaseRequest};

/// One ask the table keeps.
#[derive(Debug, Clone)]
pub(super) struct Parked {
    holder: String,
    req: LeaseRequest,
    /// When it must be answered, whatever it got (table's clock).
    until: u64,
    /// The permits it had when it was kept.
    got: u32,
}

/// One watch the table keeps.
#[derive(Debug, Clone)]
pub(super) struct Watch {
    holder: String,
    /// What the holder believes (answered when it is no longer true).
    contended: bool,
    until: u64,
}

impl LeaseTable {
    /// Handles a request that may wait: like [`LeaseTable::request`], but
    /// when the holder asked for more, got nothing more than it had, is short
    /// of its fair share and may wait (`wait_ms > 0`, outside learning
    /// mode), the ask is kept and `None` returned; its answer comes later from [`LeaseTable::answer_parked`].
    /// Any call the same holder left kept (an ask or a watch) is dropped:
    /// the holder has moved on from it, and ignores its answer.
    pub fn ask(&mut self, holder: &str, req: LeaseRequest, now: u64) -> Option<Grant> {
        self.forget(holder);
        let before = self.leased_to(holder);
        let grant = self.request(holder, req, now);
        // Kept only while it waits for its fair share and got nothing new
        // (permits granted now are answered now, and the holder asks again
        // for the rest); a holder at its share that wants more is answered
        // at once and hears from its watch when permits are free.
        let short_of_share = grant.permits < self.fair_target(holder, req.wanted);
        let keep = grant.permits < req.wanted && grant.permits <= before && short_of_share;
        if !keep || req.wait_ms == 0 || grant.learning {
            return Some(grant);
        }
        let mut kept = req;
        // The samples were taken into account once, now.
        kept.report = edgeshed::limit::adaptive::WindowSummary::default();
        self.parked.push(Parked {
            holder: holder.to_owned(),
            req: kept,
            until: now.saturating_add(req.wait_ms),
            got: grant.permits,
        });
        None
    }

    /// A holder's watch: answered at once (`Some(contended)`) when a holder
    /// waits (an ask is kept) and this one believes the budget uncontended,
    /// or when permits are free and this one wanted more than it got; else
    /// kept until `wait_ms` from `now` or until that happens
    /// ([`LeaseTable::answer_parked`]).
    ///
    /// A holder watches only with no lease call under way, so a watch that
    /// finds its holder's ask kept is older than that ask (the two crossed
    /// on the way): it is answered at once and the ask stays kept.
    pub fn watch(&mut self, holder: &str, contended: bool, wait_ms: u64, now: u64) -> Option<bool> {
        if self.parked.iter().any(|parked| parked.holder == holder) {
            return Some(self.contended());
        }
        self.forget(holder);
        self.expire(now);
        let waiting = !self.parked.is_empty();
        let free = self.leased() < self.limit;
        if (waiting && !contended) || (free && self.unmet(holder) > 0) || wait_ms == 0 {
            return Some(self.contended());
        }
        self.watches.push(Watch {
            holder: holder.to_owned(),
            contended,
            until: now.saturating_add(wait_ms),
        });
        None
    }

    /// Drops the kept ask and watch of `holder`, if any.
    fn forget(&mut self, holder: &str) {
        self.parked.retain(|parked| parked.holder != holder);
        self.watches.retain(|watch| watch.holder != holder);
    }

    /// Answers the kept asks that can get more permits now or whose wait is
    /// over (oldest first; the others stay kept), then the watches whose
    /// belief about contention is no longer true or whose time is up. Call
    /// it after every request or watch, after an expiry sweep or a limit
    /// change, and at [`LeaseTable::next_parked_at`].
    pub fn answer_parked(&mut self, now: u64) -> Vec<Answer> {
        self.expire(now);
        let mut answered = Vec::new();
        for parked in core::mem::take(&mut self.parked) {
            let due = now >= parked.until;
            // Without a free permit the ask cannot get more: leave the
            // table as it is (a request would renew the lease again).
            if !due && self.leased() >= self.limit {
                self.parked.push(parked);
                continue;
            }
            let grant = self.request(&parked.holder, parked.req, now);
            if due || grant.permits > parked.got {
                answered.push(Answer::Lease(parked.holder, grant));
            } else {
                self.parked.push(parked);
            }
        }
        // Watches hear that a holder waits (a kept ask); that contention
        // ended they hear from their next lease call, not from a notice
        // (which would cost every holder a call each time it flips). And a
        // holder that wants more than its share got hears that permits are
        // free (at most one holder per free permit, the most short first).
        let waiting = !self.parked.is_empty();
        let contended = self.contended();
        let mut wanting: Vec<(u32, usize)> = self
            .watches
            .iter()
            .enumerate()
            .filter(|(_, watch)| self.unmet(&watch.holder) > 0)
            .map(|(index, watch)| (self.leased_to(&watch.holder), index))
            .collect();
        wanting.sort_unstable();
        let free = self.limit.saturating_sub(self.leased()) as usize;
        let called: Vec<usize> = wanting
            .into_iter()
            .take(free)
            .map(|(_, index)| index)
            .collect();
        for (index, watch) in core::mem::take(&mut self.watches).into_iter().enumerate() {
            let notify = (waiting && !watch.contended) || called.contains(&index);
            if notify || now >= watch.until {
                answered.push(Answer::Notice(watch.holder, contended));
            } else {
                self.watches.push(watch);
            }
        }
        answered
    }

    /// When the earliest kept ask or watch must be answered, if any.
    pub fn next_parked_at(&self) -> Option<u64> {
        let asks = self.parked.iter().map(|parked| parked.until);
        asks.chain(self.watches.iter().map(|watch| watch.until))
            .min()
    }

    /// Asks kept now.
    pub fn parked(&self) -> usize {
        self.parked.len()
    }

    /// Watches kept now.
    pub fn watching(&self) -> usize {
        self.watches.len()
    }
}
