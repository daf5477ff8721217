//! The holder's watch: a call the table keeps until the budget's contention
//! changes, so the holder hears at once that others need permits it does not
//! use (see `table/park.rs`).

use super::LeaseHolder;
use crate::budget::types::WatchRequest;

impl LeaseHolder {
    /// The watch to open at `now`, if any: a holder with permits, no call
    /// under way and no watch open watches until its renewal (while it
    /// knows the budget contended, only if it wants more than it got). Call it when
    /// [`LeaseHolder::poll`] has nothing to send; its outcome comes back
    /// through [`LeaseHolder::on_notice`] or [`LeaseHolder::on_watch_failure`].
    /// A lease call the holder sends meanwhile supersedes it.
    pub fn watch(&mut self, now: u64) -> Option<WatchRequest> {
        if self.pending.is_some()
            || self.watch.is_some()
            || !self.reachable
            || now < self.watch_retry_at
            || self.held(now) == 0
        {
            return None;
        }
        let wait_ms = self.renew_at.saturating_sub(now);
        // A holder that knows the budget contended gives back unused permits
        // on its own; it needs a watch only to hear of free permits it wants.
        if wait_ms == 0 || (self.contended && self.permits >= self.last_wanted) {
            return None;
        }
        self.watch = Some(now);
        Some(WatchRequest {
            contended: self.contended,
            wait_ms,
        })
    }

    /// Whether the holder will not ask for more before a later time: the
    /// table answered its last ask at once with nothing more (it holds its
    /// fair share of a budget that others want too).
    pub fn backed_off(&self, now: u64) -> bool {
        self.pending.is_none() && now < self.grow_at
    }

    /// Whether a request the lease cannot cover now has no permit to wait
    /// for, and is refused at once: the holder has backed off
    /// ([`LeaseHolder::backed_off`]) and has no call in flight. While it has
    /// calls in flight, each that ends gives its permit back to the lease
    /// (a call of 10–50 ms, far sooner than the object could move a
    /// permit), so the request waits for one, up to its patience, as in
    /// the queue of one exact limit (refused at once, goodput with 1,000
    /// isolates at 0.5x was 0.74, `tests/budget_scale.rs`).
    pub fn refuses_at_once(&self, now: u64) -> bool {
        self.backed_off(now) && self.in_flight == 0
    }

    /// Whether a watch is open.
    pub fn watching(&self) -> bool {
        self.watch.is_some()
    }

    /// Whether the last answer said the budget is contended (the holder then
    /// gives back what it has not needed for `linger_ms`).
    pub fn contended(&self) -> bool {
        self.contended
    }

    /// The watch's answer: whether the budget is contended now. The table
    /// answers a watch to be called: to hear that others wait (so the holder
    /// gives back what it does not use), or that permits are free (so it may
    /// ask again at once). Ignored if a lease call superseded the watch.
    pub fn on_notice(&mut self, now: u64, contended: bool) {
        if let Some(sent_at) = self.watch.take() {
            self.contended = contended;
            self.noticed = true;
            self.grow_at = 0;
            // Answered at once: no new watch for `linger_ms` (a table that
            // keeps answering at once must not be called in a loop).
            if now < sent_at.saturating_add(self.cfg.linger_ms) {
                self.watch_retry_at = sent_at.saturating_add(self.cfg.linger_ms);
            }
        }
    }

    /// The watch failed at `now`: another one no sooner than `retry_ms`.
    pub fn on_watch_failure(&mut self, now: u64) {
        if self.watch.take().is_some() {
            self.watch_retry_at = now.saturating_add(self.cfg.retry_ms);
        }
    }
}
