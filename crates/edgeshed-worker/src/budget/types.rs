//! The messages between a holder and the table, and the fleet view.

use serde::Serialize;

/// What a holder sends to the table: one message grants, renews and
/// releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
}

/// The table's answer: the holder's whole lease after the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grant {
    /// Permits the holder now holds (its total, not an increment).
    pub permits: u32,
    /// How long the lease lasts, counted from when the table handled the
    /// request. The holder counts it from when it sent the request.
    pub ttl_ms: u64,
    /// When the holder should call again, counted like `ttl_ms`: 75 % of
    /// the TTL normally; sooner when it must give permits back (it holds
    /// more than its fair share, or more than half the limit, which a
    /// holder that has not asked yet may need); and for a holder that got
    /// less than its fair share, the earliest time permits can free (another
    /// holder's renewal or expiry), so it waits instead of polling.
    pub renew_ms: u64,
    /// Whether the table is in learning mode (it grants nothing new).
    pub learning: bool,
}

/// The fleet view of one origin, as `GET /__edgeshed/budget` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FleetView {
    /// The fleet limit (`budget.maxInFlight`).
    pub limit: u32,
    /// Permits out under unexpired leases.
    pub leased: u32,
    /// Holders with at least one permit leased.
    pub holders: u32,
    /// Whether the table is still in learning mode.
    pub learning: bool,
}
