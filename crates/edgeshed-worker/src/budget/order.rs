//! The order in which the calls of one fan-out request take fleet-budget
//! permits: by origin (the configuration's order), one at a time.
//! (Futures and wakers only, no I/O: the gateway's fan-out uses it.)
//!
//! A budgeted call may wait for a permit (`handler/budget/admit.rs`) while the same
//! request holds another origin's. If two requests took them in opposite
//! orders, each could hold what the other waits for until both gave up (at
//! overload, every request: goodput fell to a tenth in the fleet bench). One
//! global order, as for locks, makes that cycle impossible: a request waits
//! for origin `j`'s permit only while holding permits of origins before `j`.

use core::cell::RefCell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

/// The budgeted calls of one request still to take their permit, as
/// (origin index, call position), and who waits for its turn.
#[derive(Default)]
pub struct BudgetOrder {
    waiting: RefCell<Vec<(usize, usize)>>,
    wakers: RefCell<Vec<Waker>>,
}

impl BudgetOrder {
    /// The order of `calls` (origin index per call position), of which
    /// those for which `budgeted(origin)` take part.
    pub fn new(origins: impl Iterator<Item = usize>, budgeted: impl Fn(usize) -> bool) -> Self {
        let mut waiting: Vec<(usize, usize)> = origins
            .enumerate()
            .filter(|&(_, origin)| budgeted(origin))
            .map(|(position, origin)| (origin, position))
            .collect();
        waiting.sort_unstable();
        Self {
            waiting: RefCell::new(waiting),
            wakers: RefCell::new(Vec::new()),
        }
    }

    /// The ticket of the call at `position` to origin `origin`: its turn
    /// comes once every call before it in the order is done; dropping the
    /// ticket (its admission ended, or the call was dropped) lets the next
    /// one go.
    pub fn ticket(&self, origin: usize, position: usize) -> Ticket<'_> {
        Ticket {
            order: self,
            entry: (origin, position),
        }
    }

    fn first(&self) -> Option<(usize, usize)> {
        self.waiting.borrow().first().copied()
    }
}

/// One call's place in the order (see [`BudgetOrder::ticket`]).
pub struct Ticket<'a> {
    order: &'a BudgetOrder,
    entry: (usize, usize),
}

impl Ticket<'_> {
    /// Ready once every call before this one is done (at once if this
    /// call does not take part).
    pub fn turn(&self) -> impl Future<Output = ()> + '_ {
        Turn { ticket: self }
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        self.order
            .waiting
            .borrow_mut()
            .retain(|entry| *entry != self.entry);
        let wakers = core::mem::take(&mut *self.order.wakers.borrow_mut());
        for waker in wakers {
            waker.wake();
        }
    }
}

struct Turn<'a, 'b> {
    ticket: &'b Ticket<'a>,
}

impl Future for Turn<'_, '_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let order = self.ticket.order;
        let takes_part = order.waiting.borrow().contains(&self.ticket.entry);
        match order.first() {
            Some(first) if takes_part && first < self.ticket.entry => {
                let mut wakers = order.wakers.borrow_mut();
                if !wakers.iter().any(|known| known.will_wake(cx.waker())) {
                    wakers.push(cx.waker().clone());
                }
                Poll::Pending
            }
            _ => Poll::Ready(()),
        }
    }
}
