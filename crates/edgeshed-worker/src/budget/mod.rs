//! The fleet budget's pure heart: one origin's limit shared by every isolate.
//!
//! A Durable Object per origin holds a [`LeaseTable`]; each isolate holds a
//! [`LeaseHolder`] per budgeted origin. Isolates lease permits in batches
//! for a TTL and spend them through their local limiter, so admissions do
//! not cost a call to the object each. Everything here is plain state
//! driven by an injected clock (milliseconds as `u64`, e.g. `Date.now()` in
//! the object and the isolate): no timers, no I/O, no wasm-bindgen.
//!
//! Rules (see docs/gateway.md, "Fleet budget"):
//! - **Safety:** the table never has more than `limit` permits leased to
//!   unexpired leases, and a holder never counts a permit past its lease's
//!   expiry (computed from the time it *sent* the request, so it expires
//!   no later than the table's record).
//! - **Fairness:** when demand exceeds the limit, permits are shared
//!   max-min fairly (water-filling, see [`fair_share`]); a lease is never
//!   shrunk below the permits its holder has in use.
//! - **Learning mode:** a table that starts (or restarts) knows nothing;
//!   for one TTL it only re-registers what holders report they hold, and a
//!   holder ignores a re-registration that came back after its old lease
//!   expired. A table that knows when the old leases expire at the latest
//!   ([`LeaseTable::resumed`], the object's stored horizon) learns only
//!   until then. This assumes the restarted object's clock is not behind the
//!   one that granted the old leases.

mod fair;
mod fallback;
mod holder;
mod table;
mod types;

pub use fair::fair_share;
pub use fallback::{effective_limit, Unavailable};
pub use holder::{HolderConfig, LeaseHolder};
pub use table::LeaseTable;
pub use types::{FleetView, Grant, LeaseRequest};
