//! [`Wakers`]: the waiters a locked operation woke, to be woken once the
//! lock is released.

use core::task::Waker;

/// Wakers collected under the lock. Most operations wake at most one
/// waiter; that one costs no allocation.
#[derive(Debug, Default)]
#[must_use = "the collected waiters must be woken"]
pub(super) struct Wakers {
    first: Option<Waker>,
    more: Vec<Waker>,
}

impl Wakers {
    /// Adds `waker`, if any.
    pub(super) fn push(&mut self, waker: Option<Waker>) {
        let Some(waker) = waker else {
            return;
        };
        if self.first.is_none() {
            self.first = Some(waker);
        } else {
            self.more.push(waker);
        }
    }

    /// Wakes them all (call with the lock released).
    pub(super) fn wake(self) {
        if let Some(first) = self.first {
            first.wake();
        }
        self.more.into_iter().for_each(Waker::wake);
    }
}
