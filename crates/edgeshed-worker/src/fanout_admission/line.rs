//! The line of one fan-out request's calls, in admission order, and what
//! each call is waiting for (see the module docs for the rules and why
//! they are deadlock-free).

use super::Acquire;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

/// The outcome of one call's admission.
pub(super) type Outcome<A> = Result<<A as Acquire>::Permit, <A as Acquire>::Refused>;

/// Where one call's admission is.
pub(super) enum Step<A: Acquire> {
    /// Its permits are not all held yet. Behind the head of the line: not
    /// entered yet; at the head: entered, waiting in line; before the head:
    /// an optional call waiting out of line.
    Pending(A),
    /// Admitted or refused, until its call takes the outcome.
    Decided(Outcome<A>),
    /// Taken by its call, or given up with it.
    Gone,
}

/// One call of the request.
pub(super) struct Entry<A: Acquire> {
    /// Its index in the route's list of calls.
    pub(super) position: usize,
    /// Its origin: the rank of its permits in the order.
    pub(super) origin: usize,
    pub(super) required: bool,
    /// Whether it has been admitted (its permits are held, here or by its call).
    pub(super) admitted: bool,
    pub(super) step: Step<A>,
}

/// The calls of one request sorted by (origin, position), the head of the
/// line, and who waits at the gate.
pub(super) struct Line<A: Acquire> {
    pub(super) entries: Vec<Entry<A>>,
    /// The first entry in line not admitted yet: every entry before it is
    /// admitted, refused (optional), given up, or waiting out of line.
    head: usize,
    /// Required calls not admitted yet.
    required_left: usize,
    /// A required call was refused (or given up): nothing more is taken.
    pub(super) decided: bool,
    /// Turns waiting at the gate (or for their own admission).
    pub(super) wakers: Vec<Waker>,
}

impl<A: Acquire> Line<A> {
    pub(super) fn new(mut entries: Vec<Entry<A>>) -> Self {
        entries.sort_unstable_by_key(|entry| (entry.origin, entry.position));
        let required_left = entries.iter().filter(|entry| entry.required).count();
        Self {
            entries,
            head: 0,
            required_left,
            decided: false,
            wakers: Vec::new(),
        }
    }

    /// Moves every call on as far as it can without waiting: polls the
    /// optional calls waiting out of line, then the head of the line, and
    /// enters the calls behind it one at a time while each is admitted at
    /// once. Returns whether anything changed (a call admitted or refused,
    /// the head moved).
    pub(super) fn advance(&mut self, cx: &mut Context<'_>) -> bool {
        let mut changed = false;
        if self.decided {
            return false;
        }
        let head = self.head;
        for entry in self.entries.iter_mut().take(head) {
            if let Step::Pending(acquire) = &mut entry.step {
                if let Poll::Ready(outcome) = Pin::new(acquire).poll(cx) {
                    changed = true;
                    if entry.settle(outcome) {
                        self.required_left = self.required_left.saturating_sub(1);
                    }
                }
            }
        }
        while let Some(entry) = self.entries.get_mut(self.head) {
            let Step::Pending(acquire) = &mut entry.step else {
                // decided or given up before its turn
                self.head += 1;
                changed = true;
                continue;
            };
            // The head's first poll is its synchronous first step: admitted
            // or refused at once, or it now holds its place in its queue.
            match Pin::new(acquire).poll(cx) {
                Poll::Pending if entry.required => break,
                Poll::Pending => {}
                Poll::Ready(outcome) => {
                    if entry.settle(outcome) {
                        self.required_left = self.required_left.saturating_sub(1);
                    } else if entry.required && !entry.admitted {
                        // refused: it decides the request
                        self.decided = true;
                        return true;
                    }
                }
            }
            // admitted, refused (optional) or out of line: the next one's turn
            self.head += 1;
            changed = true;
        }
        changed
    }

    /// Whether the admitted call at `index` may go on to its fetch: every
    /// required call is admitted, or the head of the line waits for the
    /// call's own origin (its sibling there may wait for this call's permit).
    pub(super) fn gate_open(&self, index: usize) -> bool {
        if self.decided {
            return false;
        }
        if self.required_left == 0 {
            return true;
        }
        match (self.entries.get(self.head), self.entries.get(index)) {
            (Some(head), Some(call)) => {
                head.origin == call.origin && matches!(head.step, Step::Pending(_))
            }
            _ => false,
        }
    }

    /// Gives up the call at `index` (its turn was dropped before it
    /// resolved): returns what it held, to be dropped once the line is no
    /// longer borrowed (`None` if it held nothing any more). A required call
    /// given up before its admission gives up the request.
    pub(super) fn give_up(&mut self, index: usize) -> Option<Step<A>> {
        let entry = self.entries.get_mut(index)?;
        if matches!(entry.step, Step::Gone) {
            return None;
        }
        if entry.required && !entry.admitted {
            self.decided = true;
        }
        Some(core::mem::replace(&mut entry.step, Step::Gone))
    }

    /// Takes the wakers of every waiting turn.
    pub(super) fn take_wakers(&mut self) -> Vec<Waker> {
        core::mem::take(&mut self.wakers)
    }

    /// Registers `waker` to be woken when the line changes.
    pub(super) fn register(&mut self, waker: &Waker) {
        if !self.wakers.iter().any(|known| known.will_wake(waker)) {
            self.wakers.push(waker.clone());
        }
    }
}

impl<A: Acquire> Entry<A> {
    /// Records the outcome of its admission; returns whether it was a
    /// required call admitted.
    fn settle(&mut self, outcome: Outcome<A>) -> bool {
        self.admitted = outcome.is_ok();
        self.step = Step::Decided(outcome);
        self.admitted && self.required
    }
}
