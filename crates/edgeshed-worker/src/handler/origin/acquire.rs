//! Taking one call's permits of its origin, local limit then fleet budget:
//! a future whose first poll decides without waiting when it can (the
//! core's `Admit::enter`, then the holder's lease), so a call admitted at
//! once arms no timer and prepares for no wake (see
//! [`crate::fanout_admission`], which orders these across a request's calls).

use super::limit::time_limit;
use super::runtime::{Admitted, OriginPermit, OriginRuntime, Refused};
use crate::failure::Failure;
use crate::handler::budget::BudgetPermit;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;
use edgeshed::admission::{Admit, Call};
use edgeshed::semaphore::Permit;
use edgeshed::time::{Clock, Instant};
use edgeshed_wasm::task::RemoteWake;
use edgeshed_wasm::JsClock;
use wasm_bindgen::JsValue;

/// Where one call's admission is.
enum Stage<'r> {
    /// The local limit, before its synchronous first step.
    Local(Admit<JsClock>),
    /// Queued at the local limit: a hand-off may come from another request.
    Queued(RemoteWake<Admit<JsClock>>),
    /// Holding the local permit, waiting for the fleet budget's.
    Budget(
        Option<Permit>,
        Pin<Box<dyn Future<Output = Result<BudgetPermit, Failure>> + 'r>>,
    ),
    Done,
}

/// The admission of one call to an origin (see [`OriginRuntime::acquire`]).
pub(crate) struct Acquiring<'r> {
    origin: &'r OriginRuntime,
    ctx: &'r JsValue,
    deadline: Option<Instant>,
    /// When the call's request began to wait for it.
    since: Instant,
    stage: Stage<'r>,
}

impl OriginRuntime {
    /// Takes a permit for `call` (its criticality and key), before
    /// `deadline`: the local limit, then the fleet budget, if any, under
    /// the request's `ctx`. `since`: when the request began its admission
    /// (the wait is measured from there). Dropping it leaves the queue.
    pub(crate) fn acquire<'r>(
        &'r self,
        call: &Call,
        deadline: Option<Instant>,
        ctx: &'r JsValue,
        since: Instant,
    ) -> Acquiring<'r> {
        let admit = match deadline {
            Some(at) => self.admission.admit_call_before(call.clone(), at),
            None => self.admission.admit_call(call.clone()),
        };
        Acquiring {
            origin: self,
            ctx,
            deadline,
            since,
            stage: Stage::Local(admit),
        }
    }
}

impl<'r> Acquiring<'r> {
    /// The local permit is held: the budget's, if the origin has one, now
    /// or by waiting.
    fn local_admitted(&mut self, local: Permit) -> Option<Result<Admitted, Refused>> {
        let origin: &'r OriginRuntime = self.origin;
        let Some(budget) = &origin.budget else {
            return Some(Ok(self.finish(local, None)));
        };
        if let Some(permit) = budget.try_now(self.ctx) {
            return Some(Ok(self.finish(local, Some(permit))));
        }
        let limit = time_limit(self.deadline, origin.config.timeout);
        self.stage = Stage::Budget(Some(local), Box::pin(budget.admit(self.ctx, limit)));
        None
    }

    /// The time waited, observed in the origin's wait histogram.
    fn waited(&mut self) -> Duration {
        self.stage = Stage::Done;
        let waited = JsClock.now().saturating_duration_since(self.since);
        self.origin.wait.borrow_mut().observe(waited);
        waited
    }

    fn finish(&mut self, local: Permit, budget: Option<BudgetPermit>) -> Admitted {
        (OriginPermit::new(local, budget), self.waited())
    }

    // (a budget refusal is observed in the wait histogram too)
    fn refuse(&mut self, failure: Failure) -> Result<Admitted, Refused> {
        Err((failure, self.waited()))
    }
}

impl Future for Acquiring<'_> {
    type Output = Result<Admitted, Refused>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        loop {
            let local = match &mut this.stage {
                Stage::Local(admit) => match admit.enter() {
                    Poll::Ready(outcome) => outcome,
                    Poll::Pending => {
                        let Stage::Local(admit) = core::mem::replace(&mut this.stage, Stage::Done)
                        else {
                            return Poll::Pending;
                        };
                        this.stage = Stage::Queued(RemoteWake::new(admit));
                        continue;
                    }
                },
                Stage::Queued(queued) => match Pin::new(queued).poll(cx) {
                    Poll::Ready(outcome) => outcome,
                    Poll::Pending => return Poll::Pending,
                },
                Stage::Budget(local, wait) => {
                    let outcome = std::task::ready!(wait.as_mut().poll(cx));
                    let local = local.take();
                    return Poll::Ready(match (outcome, local) {
                        (Ok(budget), Some(local)) => Ok(this.finish(local, Some(budget))),
                        (Err(failure), _) => this.refuse(failure),
                        (Ok(_), None) => this.refuse(Failure::Unreachable),
                    });
                }
                // polled after it resolved
                Stage::Done => return Poll::Pending,
            };
            return match local {
                // Expired, fair share, overloaded, closed.
                Err(error) => Poll::Ready(this.refuse(Failure::of_admission(&error))),
                Ok(local) => match this.local_admitted(local) {
                    Some(admitted) => Poll::Ready(admitted),
                    None => continue,
                },
            };
        }
    }
}
