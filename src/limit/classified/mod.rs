//! A concurrency limit that admits each request as what it says it is: its
//! [`Criticality`](crate::admission::Criticality) and its
//! [`Key`](crate::Key), read from the request.
//!
//! tower's two-step protocol reserves capacity in `poll_ready`, before the
//! request is known, so it cannot tell a checkout call from a beacon.
//! [`ClassifiedLimit`] is always ready instead: `call` reads the request's
//! [`Call`](crate::admission::Call) (with a [`ReadCall`](crate::admission::ReadCall):
//! a closure, or `http::Request` extensions with the `http` feature) and
//! admits it through a shared [`Admission`](crate::admission::Admission) in
//! its response future, so everything the admission does applies per
//! request: the reserves, the queue order, displacement, the fair share, the
//! rate limit, codel. The inner service is polled ready and called only once
//! the request is admitted, on a clone (hence `S: Clone`).
//!
//! Refusals are errors of the response future: [`Overloaded`](crate::error::Overloaded)
//! (503, with its reason) or [`RateLimited`](crate::error::RateLimited) (429).
//!
//! ```
//! use edgeshed::admission::{Admission, Call, Criticality, Options, Policy, Reserve};
//! use edgeshed::error::Overloaded;
//! use edgeshed::limit::ClassifiedLimitLayer;
//! use edgeshed::time::ManualClock;
//! use std::time::Duration;
//! use tower::{Service, ServiceExt};
//! use tower_layer::Layer;
//!
//! #[derive(Clone, Copy)]
//! struct Request { checkout: bool }
//!
//! # futures::executor::block_on(async {
//! let options = Options::new().reserve(Reserve::default());
//! let admission = Admission::with_options(2, Policy::Shed, options, ManualClock::new()).unwrap();
//! let origin = tower::service_fn(|_: Request| std::future::pending::<Result<(), std::convert::Infallible>>());
//! let svc = ClassifiedLimitLayer::new(admission.clone())
//!     .read_call_with(|request: &Request| {
//!         Call::new(if request.checkout { Criticality::Critical } else { Criticality::Sheddable })
//!     })
//!     .layer(origin);
//!
//! // Limit 2: a sheddable call may hold 1 slot, the other stays for critical calls.
//! let mut batch = svc.clone().oneshot(Request { checkout: false });
//! assert!(futures::poll!(&mut batch).is_pending()); // admitted, running
//! let shed = svc.clone().oneshot(Request { checkout: false }).await.unwrap_err();
//! assert_eq!(shed.downcast_ref::<Overloaded>().map(|o| o.reason()), Some("limit"));
//! let mut checkout = svc.clone().oneshot(Request { checkout: true });
//! assert!(futures::poll!(&mut checkout).is_pending()); // admitted too
//! assert_eq!(admission.stats().by_criticality.critical.in_flight, 1);
//! # });
//! ```
//!
//! With adaptive limits, drive the admission's semaphore with a
//! [`Controller`](crate::limit::adaptive::Controller) and sample the inner
//! service with [`Sampled`](crate::limit::adaptive::Sampled): the reserves
//! follow whatever limit the algorithm sets.

mod future;
mod layer;
mod service;

pub use future::ResponseFuture;
pub use layer::ClassifiedLimitLayer;
pub use service::ClassifiedLimit;
