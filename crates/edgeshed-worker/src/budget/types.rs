//! The messages between a holder and the table, and the fleet view.

use serde::Serialize;

use edgeshed::limit::adaptive::WindowSummary;

/// What a holder sends to the table: one message grants, renews, grows,
/// shrinks and releases.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LeaseRequest {
    /// Permits the holder believes it holds under an unexpired lease. The
    /// table trusts this only in learning mode, to re-register leases
    /// granted before it (re)started.
    pub held: u32,
    /// Permits the holder has in use right now (calls in flight); it uses no
    /// more while the call is under way. The table never shrinks the lease
    /// below this (it cannot recall a call), so the holder stays within its
    /// lease whatever the answer, even a lost one.
    pub in_use: u32,
    /// Permits the holder wants in total for the next TTL; `0` releases the
    /// lease.
    pub wanted: u32,
    /// How long the table may hold the request when it cannot grant all of
    /// `wanted` now (ms): it answers as soon as permits come back (another
    /// holder gives some back, a lease expires, the limit grows), or when
    /// this time is up. `0`: answer at once.
    pub wait_ms: u64,
    /// The calls the holder started in epoch `epoch` and finished since its
    /// last report: what an adaptive fleet limit learns from (empty for a
    /// fixed one).
    pub report: WindowSummary,
    /// The epoch (number of the fleet limit) its reported calls started in.
    pub epoch: u64,
    /// The longest a call it admits may last (its `cutoff_ms`: it admits
    /// none later than this before its lease expires); `0` when unknown.
    /// The table then grants a lease only this much longer than its
    /// admission window ([`LeaseTable::lease_ttl`]), so a lease an evicted
    /// isolate leaves behind comes back sooner.
    ///
    /// [`LeaseTable::lease_ttl`]: super::LeaseTable::lease_ttl
    pub calls_ms: u64,
}

impl LeaseRequest {
    /// A request that is answered at once, with no samples.
    pub fn new(held: u32, in_use: u32, wanted: u32) -> Self {
        Self {
            held,
            in_use,
            wanted,
            wait_ms: 0,
            report: WindowSummary::default(),
            epoch: 0,
            calls_ms: 0,
        }
    }

    /// The same request, allowed to wait `wait_ms` at the table.
    pub fn waiting(mut self, wait_ms: u64) -> Self {
        self.wait_ms = wait_ms;
        self
    }
}

/// The table's answer: the holder's whole lease after the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grant {
    /// Permits the holder now holds (its total, not an increment).
    pub permits: u32,
    /// How long the lease lasts, counted from when the table handled the
    /// request (at most the configured TTL; shorter for a holder that said
    /// how long its calls last: [`LeaseRequest::calls_ms`]). The holder
    /// counts it from when it sent the request.
    pub ttl_ms: u64,
    /// When the holder should call again, counted like `ttl_ms`: 75 % of
    /// the TTL normally; sooner when it must give permits back (it holds
    /// more than its fair share, or more than half the limit, which a
    /// holder that has not asked yet may need); and for a holder that got
    /// less than its fair share, the earliest time permits can free (another
    /// holder's renewal or expiry).
    pub renew_ms: u64,
    /// Whether the table is in learning mode (it grants nothing new).
    pub learning: bool,
    /// Whether the budget is contended ([`LeaseTable::contended`]): the
    /// holder then gives back permits it has not needed for `linger_ms`
    /// without waiting for its renewal.
    ///
    /// [`LeaseTable::contended`]: super::LeaseTable::contended
    pub contended: bool,
    /// The epoch of the fleet limit (an adaptive one counts its windows;
    /// a fixed one stays 0): the holder tags the calls it starts with it.
    pub epoch: u64,
}

/// A holder's watch: a call the table keeps until the budget becomes
/// contended (or stops being so), so a holder whose permits others need
/// hears it at once, without polling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchRequest {
    /// Whether the holder believes the budget contended now (the table
    /// answers when that is no longer true).
    pub contended: bool,
    /// How long the table may keep it (ms): until the holder's renewal.
    pub wait_ms: u64,
}

/// What the table answers to kept asks and watches
/// ([`LeaseTable::answer_parked`](super::LeaseTable::answer_parked)), per holder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The answer to a kept ask: the holder's whole lease.
    Lease(String, Grant),
    /// The answer to a watch: whether the budget is contended now.
    Notice(String, bool),
}

/// The fleet view of one origin, as `GET /__edgeshed/budget` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FleetView {
    /// The fleet limit (`budget.maxInFlight`, or the adaptive limit now).
    pub limit: u32,
    /// Permits out under unexpired leases.
    pub leased: u32,
    /// Holders with at least one permit leased.
    pub holders: u32,
    /// Whether the table is still in learning mode.
    pub learning: bool,
}
