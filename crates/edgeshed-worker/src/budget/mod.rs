//! The fleet budget's pure heart: one origin's limit shared by every isolate.
//!
//! A Durable Object per origin holds a [`LeaseTable`]; each isolate holds a
//! [`LeaseHolder`] per budgeted origin. Isolates lease permits for a TTL and
//! spend them through their local limiter, so admissions do not cost a call
//! to the object each. Everything here is plain state driven by an injected
//! clock (milliseconds as `u64`, e.g. `Date.now()` in the object and the
//! isolate): no timers, no I/O, no wasm-bindgen.
//!
//! Rules (see docs/gateway.md, "Fleet budget"):
//! - **Leases follow demand:** a holder asks for what its calls in flight
//!   and waiting requests need, as soon as they need it, renews with the
//!   most it needed since its last call, and gives its whole lease back as
//!   soon as it is idle (no call in flight, nobody waiting). A request that
//!   finds no permit waits up to `patience_ms` (TTL / 10, or less if its
//!   deadline or the origin's `timeoutMs` is sooner); the table keeps its
//!   holder's ask meanwhile and answers it the moment permits come back
//!   ([`LeaseTable::ask`]), and tells every holder that keeps a watch
//!   ([`LeaseTable::watch`]) that someone waits, upon which holders give
//!   back at once every permit they do not use (while nobody waits, they
//!   keep their leases to their renewal). So a permit unused anywhere
//!   in the fleet reaches a request that waits for it within a few round
//!   trips, and a request is refused (503, reason `budget`) only when no
//!   permit came back while it waited — or at once, when its holder holds
//!   its fair share of a budget others want too and has no call in flight
//!   ([`LeaseHolder::refuses_at_once`]); with calls in flight it waits for
//!   one of them to end, as in the queue of one exact limit.
//! - **Fairness:** when demand exceeds the limit, permits are shared
//!   max-min fairly (water-filling, see [`fair_share`]); a lease is never
//!   shrunk below the permits its holder has in use.
//! - **Learning mode:** a table that starts (or restarts) knows nothing;
//!   for one TTL it only re-registers what holders report they hold, and a
//!   holder ignores a re-registration that came back after its old lease
//!   expired. A table that knows when the old leases expire at the latest
//!   ([`LeaseTable::resumed`], the object's stored horizon) learns only
//!   until then.
//!
//! # Why the origin never sees more than the limit
//!
//! Let `L` be the fleet limit. The argument has three parts; the property
//! tests of `tests/budget_fleet.rs` check each against random interleavings
//! of grants, lost and late answers, deaths and restarts.
//!
//! 1. **The table never leases more than `L`.** A grant is at most the
//!    permits no other unexpired lease holds (`room`), and a lease is kept
//!    at least at the calls its holder reported in use (never below: a
//!    call cannot be recalled), so the sum of unexpired leases stays ≤ `L`.
//!    Waiting does not change this: a kept ask is served by the same rule
//!    when permits come back.
//! 2. **A holder never admits beyond what the table counts for it.** It
//!    admits only within its lease, counts that lease from when it *sent*
//!    the request (so it expires no later than the table's record, which
//!    starts when the table handled it, even after a wait), and while a call
//!    is under way it uses only the permits it had in use when it sent it
//!    (the answer may shrink the lease to that, or be lost). Both sides
//!    count the same length, the grant's `ttl_ms`: the TTL, or, for a
//!    holder that said its calls last at most `calls_ms` (its `cutoff_ms`),
//!    that plus a quarter of the TTL when shorter
//!    ([`LeaseTable::lease_ttl`]). The holder admits no call in the last
//!    `cutoff_ms` of its lease, so every call it admits ends before the
//!    lease does, whatever the length. A holder that is killed mid-lease
//!    stops admitting with it: its calls in flight end within the origin's
//!    `timeoutMs`, and its permits return to the table when the lease
//!    expires, one lease (at most one TTL) after its last call; with
//!    `leaseTtlMs` above `timeoutMs` (the worker warns otherwise) no call of
//!    a dead holder overlaps a permit granted again.
//! 3. **A restarted table does not over-grant.** It has lost the leases,
//!    so it grants nothing new until every lease of the previous table has
//!    expired (learning mode: one TTL, or until the stored horizon: no
//!    lease is longer than the TTL, and the horizon counts a whole TTL); it
//!    only re-registers what holders report, capped at `L`, and a holder
//!    drops a re-registration that arrived after its old lease expired.
//!    This assumes the restarted object's clock is not behind the one that
//!    granted the old leases.
//!
//! An adaptive fleet limit, and a reconfiguration (a new deploy version
//! with another `maxInFlight`, `adaptive` or `leaseTtlMs`, applied in place:
//! `table/reconfigure.rs`), move `L`. A grant never raises the sum of the
//! leases above the `L` in force, and a lease is never counted below its
//! holder's calls in flight; so when `L` falls, leases above it are not
//! recalled: holders over their share are told to renew within a tenth of
//! the TTL and are trimmed then (never below their calls in flight), nothing
//! is granted until the sum is under the new `L`, and the origin sees at
//! most the old limit while the calls admitted under it finish. The full
//! argument for a moving `L` is at the top of `table/reconfigure.rs`.

mod adaptive;
mod fair;
mod fallback;
mod fleet_limit;
mod holder;
mod setting;
mod table;
mod types;

pub use fair::fair_share;
pub use fallback::{effective_limit, Unavailable};
pub use fleet_limit::FleetLimit;
pub use holder::{HolderConfig, LeaseHolder, Waiting};
pub use setting::{BudgetSetting, DeployVersion, LimitSetting};
pub use table::LeaseTable;
pub use types::{Answer, FleetView, Grant, LeaseRequest, WatchRequest};
