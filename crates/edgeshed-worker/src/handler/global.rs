//! The worker's global admission: every routed request (not
//! `/__edgeshed/*`) passes it first, and holds its permit until its answer
//! is sent (a proxied body: until it has streamed).

use super::respond::ResponseParts;
use super::route::Admitting;
use crate::failure::{Failure, Scope};
use crate::metrics::Histogram;
use core::cell::RefCell;
use core::time::Duration;
use edgeshed::admission::Admission;
use edgeshed::semaphore::Permit;
use edgeshed::time::{Clock, Instant};
use edgeshed_wasm::JsClock;

/// The global limiter and its wait histogram.
pub(crate) struct Global {
    pub(crate) admission: Admission<JsClock>,
    /// Time waited for global admission.
    pub(crate) wait: RefCell<Histogram>,
}

/// A request admitted into the worker: its permit and how long it waited.
pub(crate) struct Admitted {
    pub(crate) permit: Permit,
    pub(crate) waited: Duration,
}

impl Global {
    /// The global limiter of `admission`.
    pub(crate) fn new(admission: Admission<JsClock>) -> Self {
        Self {
            admission,
            wait: RefCell::new(Histogram::default()),
        }
    }

    /// Admits a request (`call`: its criticality and fairness key) on
    /// `route` that entered at `entry`, waiting at most until its
    /// `deadline`. A refusal is answered here (503 scope `global`, 429 scope
    /// the route, or 504 deadline), with its `admission` timing.
    pub(crate) async fn admit(
        &self,
        entry: Instant,
        deadline: Option<Instant>,
        Admitting { call, route }: Admitting<'_>,
        retry_after_seconds: u32,
    ) -> Result<Admitted, ResponseParts> {
        let admit = match deadline {
            Some(at) => self.admission.admit_call_before(call.clone(), at),
            None => self.admission.admit_call(call.clone()),
        };
        let admitted = edgeshed_wasm::task::RemoteWake::new(admit).await;
        let waited = JsClock.now().saturating_duration_since(entry);
        self.wait.borrow_mut().observe(waited);
        let failure = match admitted {
            Ok(permit) => return Ok(Admitted { permit, waited }),
            Err(error) => Failure::of_admission(&error),
        };
        Err(
            ResponseParts::failure(failure, Scope::Global, route, retry_after_seconds)
                .timing("admission", waited),
        )
    }
}
