//! One origin in this isolate, and its one pipeline for a call: acquire
//! (its local limit, then its fleet budget: `acquire.rs`; a fan-out orders
//! these across its calls, [`crate::fanout_admission`]) → sample → fetch →
//! sample.

use super::limit::{fetch_within, time_limit, AbortOnDrop, CallLimit};
use super::sampling;
use crate::config::Origin;
use crate::failure::Failure;
use crate::handler::budget::{BudgetPermit, OriginBudget};
use crate::metrics::{ceilings, BudgetStats, Histogram};
use core::cell::RefCell;
use core::time::Duration;
use edgeshed::admission::{Admission, Reserve, Stats};
use edgeshed::limit::adaptive::{AnyLimit, Controller};
use edgeshed::semaphore::Permit;
use edgeshed::time::{Clock, Instant};
use edgeshed_wasm::JsClock;
use std::rc::Rc;
use wasm_bindgen::JsValue;

/// An origin: its configuration, its limiter (moved by its adaptive
/// controller, if any), its fleet budget, if any, and its histograms.
pub(crate) struct OriginRuntime {
    pub(crate) config: Origin,
    pub(super) admission: Admission<JsClock>,
    pub(super) controller: Option<Controller<AnyLimit>>,
    pub(crate) budget: Option<Rc<OriginBudget>>,
    /// Time waited for admission (local limit and budget).
    pub(crate) wait: RefCell<Histogram>,
    /// Time to the origin's response headers.
    pub(crate) duration: RefCell<Histogram>,
}

/// An origin permit: the local limiter's and, for a budgeted origin, the
/// fleet budget's. Dropping it frees both.
pub(crate) struct OriginPermit {
    _local: Permit,
    _budget: Option<BudgetPermit>,
}

impl OriginPermit {
    pub(super) fn new(local: Permit, budget: Option<BudgetPermit>) -> Self {
        Self {
            _local: local,
            _budget: budget,
        }
    }
}

/// An admitted call's permits and the time it waited for them.
pub(crate) type Admitted = (OriginPermit, Duration);

/// A refused call's failure and the time it waited.
pub(crate) type Refused = (Failure, Duration);

/// The request a call sends.
pub(crate) struct Outgoing {
    pub(crate) url: String,
    pub(crate) init: web_sys::RequestInit,
}

/// A call that got its response headers; it holds its permit, its limit
/// (for the body) and the abort of its fetch.
pub(crate) struct Answered {
    pub(crate) response: web_sys::Response,
    pub(crate) permit: OriginPermit,
    pub(crate) limit: CallLimit,
    pub(crate) abort: AbortOnDrop,
    /// Time waited for admission.
    pub(crate) waited: Duration,
    /// When it started to build its request (admitted, and in a fan-out
    /// through the gate).
    pub(crate) started: Instant,
    /// Time to the response headers.
    pub(crate) took: Duration,
}

/// Why a call has no response.
pub(crate) enum CallError {
    /// Not admitted (its limit, its budget, the deadline) after `waited`.
    Refused { failure: Failure, waited: Duration },
    /// Admitted, then failed before the response headers, after `took`.
    Failed {
        failure: Failure,
        waited: Duration,
        took: Duration,
    },
    /// Its request could not be built (a JS error).
    Internal(JsValue),
}

impl OriginRuntime {
    /// Sends `request()` for an `admitted` call, within the earlier of the
    /// `deadline` and the origin's `timeoutMs`, sampled for the adaptive
    /// limits. Dropping the future frees the permit and aborts the fetch.
    pub(crate) async fn send(
        &self,
        (permit, waited): Admitted,
        deadline: Option<Instant>,
        request: impl FnOnce(&Origin) -> Result<Outgoing, JsValue>,
    ) -> Result<Answered, CallError> {
        let started = JsClock.now();
        let failed = |failure| CallError::Failed {
            failure,
            waited,
            took: JsClock.now().saturating_duration_since(started),
        };
        let outgoing = request(&self.config).map_err(CallError::Internal)?;
        let abort = AbortOnDrop::new().map_err(|_| failed(Failure::Unreachable))?;
        let mut limit = CallLimit::new(time_limit(deadline, self.config.timeout));
        let sent = JsClock.now();
        let sampling = sampling::start(self.controller.as_ref(), self.budget.as_ref());
        let fetched = fetch_within(&outgoing.url, &outgoing.init, &mut limit, &abort).await;
        sampling::sample_fetch(sampling, &fetched);
        let took = JsClock.now().saturating_duration_since(sent);
        self.duration.borrow_mut().observe(took);
        match fetched {
            Ok(response) => Ok(Answered {
                response,
                permit,
                limit,
                abort,
                waited,
                started,
                took,
            }),
            Err(failure) => Err(failed(failure)),
        }
    }

    /// The limiter's stats, its reserve and its ceilings per criticality;
    /// for a budgeted origin, `limit` is the effective one (what this
    /// isolate may use of the budget, at most its local limit; idle without
    /// a lease, what its next request asks for: [`OriginBudget::shown_limit`]),
    /// and the ceilings are at most that.
    pub(crate) fn stats(&self) -> (Stats, Reserve, [usize; 3]) {
        let mut stats = self.admission.stats();
        let reserve = self.admission.reserve();
        let local = stats.limit;
        if let Some(budget) = &self.budget {
            stats.limit = local.min(budget.shown_limit() as usize);
        }
        (stats, reserve, ceilings(reserve, local, stats.limit))
    }

    /// What the budget adds to the stats (budgeted origins only).
    pub(crate) fn budget_stats(&self) -> Option<BudgetStats> {
        self.budget.as_ref().map(|budget| BudgetStats {
            leased: budget.leased(),
            shed: budget.counters.get().shed,
            unavailable: budget.counters.get().fallbacks,
        })
    }
}
