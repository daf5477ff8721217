//! Reserves that waste nothing: a reserve is lent while nobody needs it.
//!
//! A [`Reserve`](crate::admission::Reserve) keeps part of the limit free
//! for calls more critical than a rank. Kept free while no such call comes,
//! it only wastes capacity: an origin with a limit of 3 whose calls are all
//! of the default criticality admitted 2. So, as Kubernetes' API Priority
//! and Fairness lends the seats a level is not using, a rank's reserve is
//! lent to it — its calls may take the kept permits — while no call of a
//! higher criticality is *present* (holding a permit or waiting) and none
//! was seen during its last [`lend_after`] arrivals that had to take the
//! lock (a *quiet* spell). The first sight of a higher call (present, or
//! arriving, even one refused) ends the loan at once: from then on freed
//! permits are kept again, and it takes another quiet spell to lend.
//!
//! The rule keeps what the reserve is for: under a flood of sheddable calls
//! beside a steady stream of critical ones (the criticality flood bench,
//! critical at half the capacity), a critical call is present nearly
//! always, so the reserve binds as before; a limit that only ever sees one
//! criticality admits its whole limit. What it cannot do: a critical call
//! that arrives after a quiet spell finds the permits lent out, so it waits
//! (first in line) or, without a queue, is refused; the loan ends there.
//! The loan is decided on the locked paths only: the lock-free paths keep
//! the reserve (a lent permit is always taken under the lock). A higher
//! call that takes a free permit on the lock-free path is a sight too: it
//! sets a flag (`Inner::sighted`) that the loan reads at once and the next
//! locked arrival counts. Without it, brief critical calls that never
//! had to wait went unseen, and a flood of sheddable calls borrowed the
//! whole reserve between them.

use super::queue::Queue;
use super::state::Inner;
use crate::criticality::Criticality;
use crate::sync::Ordering;

/// Arrivals without a sight of a higher criticality after which a rank's
/// reserve is lent again: four limits' worth, at least 8 (at saturation,
/// about four round trips of the limit's calls).
pub(super) fn lend_after(limit: usize) -> usize {
    limit.saturating_mul(4).max(8)
}

impl Inner {
    /// Whether a call more critical than `rank` holds a permit (handed-over
    /// ones included) or waits, with `in_use` permits out.
    fn higher_present(&self, queue: &Queue, rank: Criticality, in_use: usize) -> bool {
        let waiting = Criticality::ALL
            .into_iter()
            .take_while(|&higher| higher > rank)
            .any(|higher| queue.waiters.len_of(higher) > 0);
        let out = |rank| self.out(rank) + queue.handed[rank];
        waiting
            || match rank {
                Criticality::Sheddable => in_use > out(Criticality::Sheddable),
                Criticality::Default => out(Criticality::Critical) > 0,
                Criticality::Critical => false,
            }
    }

    /// Whether a call more critical than `rank` took a permit since a
    /// locked arrival last looked (a sight not yet counted).
    fn sighted_above(&self, rank: Criticality) -> bool {
        Criticality::ALL
            .into_iter()
            .take_while(|&higher| higher > rank)
            .any(|higher| self.sighted[higher].load(Ordering::Relaxed) != 0)
    }

    /// Counts the sights noted without the lock: each ends the loans of
    /// the ranks below the one seen.
    fn take_sightings(&self, queue: &mut Queue) {
        for seen in [Criticality::Critical, Criticality::Default] {
            // A load first: a clear flag costs no read-modify-write (a sight
            // noted right after the load is counted at the next arrival, as
            // if it came after this one).
            let sighted = &self.sighted[seen];
            if sighted.load(Ordering::Relaxed) != 0 && sighted.swap(0, Ordering::Relaxed) != 0 {
                for lower in Criticality::ALL.into_iter().filter(|&lower| lower < seen) {
                    queue.quiet[lower] = 0;
                }
            }
        }
    }

    /// The free permits a `rank` call must leave now: its reserve's keep,
    /// or none while the reserve is lent to it.
    pub(super) fn keep_now(&self, queue: &Queue, rank: Criticality, in_use: usize) -> usize {
        let keep = queue.keep(rank);
        if keep == 0 || queue.quiet[rank] < lend_after(queue.limit) || self.sighted_above(rank) {
            return keep;
        }
        if self.higher_present(queue, rank, in_use) {
            keep
        } else {
            0
        }
    }

    /// Whether `rank`'s reserve is lent to it now: a reserve it must leave
    /// (`keep > 0`) that it may take all the same (for stats).
    pub(super) fn lent_now(&self, queue: &Queue, rank: Criticality, in_use: usize) -> bool {
        queue.keep(rank) > 0 && self.keep_now(queue, rank, in_use) == 0
    }

    /// An arrival of `rank` on the locked path: a sight of `rank` for every
    /// lower rank (their loans end), and for its own rank one more quiet
    /// arrival unless a higher call is present. Returns whether this made
    /// its rank's reserve lent (its waiters may take permits now).
    pub(super) fn note_arrival(&self, queue: &mut Queue, rank: Criticality, in_use: usize) -> bool {
        self.take_sightings(queue);
        for lower in Criticality::ALL.into_iter().filter(|&lower| lower < rank) {
            queue.quiet[lower] = 0;
        }
        if queue.keep(rank) == 0 {
            return false;
        }
        if self.higher_present(queue, rank, in_use) {
            queue.quiet[rank] = 0;
            return false;
        }
        let threshold = lend_after(queue.limit);
        let before = queue.quiet[rank];
        queue.quiet[rank] = before.saturating_add(1).min(threshold);
        before < threshold && queue.quiet[rank] >= threshold
    }
}
