//! The fleet budget in the isolate: one [`OriginBudget`] per budgeted
//! origin drives a [`LeaseHolder`](crate::budget::LeaseHolder) against the
//! origin's `EdgeshedBudget` Durable Object and gates the origin's
//! admissions after its local limiter.
//!
//! Dependency order: `state` (the budget's state and counters) ←
//! `calls` (its calls to the object) ← `admit` (admission under it);
//! `build` makes them from the configuration.

mod admit;
mod build;
mod calls;
mod state;

pub(crate) use admit::BudgetPermit;
pub(crate) use build::budgets;
pub(crate) use state::OriginBudget;
