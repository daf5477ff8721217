//! Changes of the limit and the reserve, and closing, under the
//! semaphore's lock: each hands free permits to every waiter that may take
//! one now and returns their wakers.

use super::queue::Queue;
use super::state::{Inner, CLOSED};
use super::wakers::Wakers;
use crate::criticality::Reserve;
use crate::sync::Ordering;

impl Inner {
    /// Changes the limit: raising it adds permits (debt first), lowering it
    /// takes free ones away and records the rest as debt; then every waiter
    /// that may now take a permit gets one. Returns their wakers.
    pub(super) fn set_limit_locked(&self, queue: &mut Queue, limit: usize) -> Wakers {
        self.resizing(true);
        if limit >= queue.limit {
            let added = limit - queue.limit;
            queue.set_limit(limit);
            let paid = added.min(queue.debt);
            queue.debt -= paid;
            self.add_to_pool(queue, added - paid);
        } else {
            let removed = queue.limit - limit;
            queue.set_limit(limit);
            let taken = self.take_available_locked(removed);
            queue.debt += removed - taken;
        }
        self.resized(queue)
    }

    /// Changes the reserve (see [`Reserve`]); returns the wakers of waiters
    /// that may now take a permit.
    pub(super) fn set_reserve_locked(&self, queue: &mut Queue, reserve: Reserve) -> Wakers {
        self.resizing(true);
        queue.reserve = reserve;
        queue.update_keeps();
        self.resized(queue)
    }

    fn resized(&self, queue: &mut Queue) -> Wakers {
        self.publish_keeps(queue);
        let mut wakers = Wakers::default();
        self.grant_eligible_locked(queue, &mut wakers);
        self.resizing(false);
        wakers
    }

    /// Sets `CLOSED` and fails every waiter; returns their wakers.
    pub(super) fn close_locked(&self, queue: &mut Queue) -> Wakers {
        self.state.fetch_or(CLOSED, Ordering::AcqRel);
        let mut wakers = Wakers::default();
        for (waker, tag) in queue.waiters.close_all() {
            queue.left(tag.key);
            wakers.push(waker);
        }
        self.sync_slow_flag(queue);
        wakers
    }
}
