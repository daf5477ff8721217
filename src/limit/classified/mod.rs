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
//! use futures::FutureExt;
//! use tower::{Service, ServiceExt};
//! use tower_layer::Layer;
//!
//! #[derive(Clone, Copy)]
//! struct Request { checkout: bool }
//!
//! # futures::executor::block_on(async {
//! let options = Options::new().reserve(Reserve::default());
//! let admission = Admission::with_options(3, Policy::Shed, options, ManualClock::new()).unwrap();
//! let origin = tower::service_fn(|_: Request| std::future::pending::<Result<(), std::convert::Infallible>>());
//! let svc = ClassifiedLimitLayer::new(admission.clone())
//!     .read_call_with(|request: &Request| {
//!         Call::new(if request.checkout { Criticality::Critical } else { Criticality::Sheddable })
//!     })
//!     .layer(origin);
//!
//! // Limit 3, a checkout in flight: sheddable calls may hold 2 slots in all,
//! // the last one stays free for critical calls.
//! let mut checkout = svc.clone().oneshot(Request { checkout: true });
//! assert!(futures::poll!(&mut checkout).is_pending()); // admitted, running
//! let mut batch = svc.clone().oneshot(Request { checkout: false });
//! assert!(futures::poll!(&mut batch).is_pending()); // admitted too
//! // Refused at once (`now_or_never`: a refusal never waits under `Policy::Shed`).
//! let shed = svc.clone().oneshot(Request { checkout: false }).now_or_never();
//! let shed = shed.expect("refused at once").unwrap_err();
//! assert_eq!(shed.downcast_ref::<Overloaded>().map(|o| o.reason().as_str()), Some("limit"));
//! let mut second_checkout = svc.clone().oneshot(Request { checkout: true });
//! assert!(futures::poll!(&mut second_checkout).is_pending()); // the kept slot
//! assert_eq!(admission.stats().by_criticality.critical.in_flight, 2);
//! # });
//! ```
//!
//! A reserve is kept only while it may be needed: after a spell with no
//! call more critical than a rank in sight, it is lent to that rank, so a
//! limit whose calls are all sheddable admits its whole limit (see
//! [`Reserve`](crate::admission::Reserve)).
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
