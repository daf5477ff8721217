//! The lease table as a JavaScript class, for the `EdgeshedBudget` Durable
//! Object (`worker/budget.mjs`): the object is a thin JS shell (Durable
//! Object RPC methods cannot be written in Rust today) and every decision is
//! made here, by [`LeaseTable`].
//!
//! Numbers cross as JavaScript numbers: the shell validates them (integers
//! in range) before calling; times are `Date.now()` milliseconds.

use crate::budget::{LeaseRequest, LeaseTable};
use wasm_bindgen::prelude::*;

/// A millisecond count from JavaScript: negative and NaN become 0.
fn millis(value: f64) -> u64 {
    if value.is_finite() && value > 0.0 {
        value as u64
    } else {
        0
    }
}

/// One origin's lease table ([`LeaseTable`]), owned by a Durable Object.
#[wasm_bindgen]
pub struct BudgetTable {
    table: LeaseTable,
    /// When the holder of the last request should call again (ms).
    renew_ms: u64,
}

#[wasm_bindgen]
impl BudgetTable {
    /// A table for `limit` permits and leases of `ttl_ms`, started at `now`;
    /// no lease of an earlier table outlives `horizon`, so it is in learning
    /// mode until the earlier of `horizon` and one TTL from now
    /// ([`LeaseTable::resumed`]).
    #[wasm_bindgen(constructor)]
    pub fn new(limit: u32, ttl_ms: f64, now: f64, horizon: f64) -> BudgetTable {
        let (ttl, now, horizon) = (millis(ttl_ms), millis(now), millis(horizon));
        BudgetTable {
            table: LeaseTable::resumed(limit, ttl, now, horizon),
            renew_ms: 0,
        }
    }

    /// The fleet limit.
    pub fn limit(&self) -> u32 {
        self.table.limit()
    }

    /// The lease TTL in milliseconds.
    #[wasm_bindgen(js_name = ttlMs)]
    pub fn ttl_ms(&self) -> f64 {
        self.table.ttl_ms() as f64
    }

    /// Grants, renews or releases `holder`'s lease; returns the permits it
    /// may use (its call-again time is then [`BudgetTable::renew_ms`]).
    pub fn request(&mut self, holder: &str, held: u32, in_use: u32, wanted: u32, now: f64) -> u32 {
        let req = LeaseRequest {
            held,
            in_use,
            wanted,
        };
        let grant = self.table.request(holder, req, millis(now));
        self.renew_ms = grant.renew_ms;
        grant.permits
    }

    /// When the holder of the last request should call again, in ms from
    /// the request ([`crate::budget::Grant::renew_ms`]).
    #[wasm_bindgen(js_name = renewMs)]
    pub fn renew_ms(&self) -> f64 {
        self.renew_ms as f64
    }

    /// Whether the table is in learning mode at `now`.
    pub fn learning(&self, now: f64) -> bool {
        self.table.learning(millis(now))
    }

    /// Drops expired leases; the earliest expiry left, or -1 if none.
    pub fn expire(&mut self, now: f64) -> f64 {
        self.table.expire(millis(now)).map_or(-1.0, |at| at as f64)
    }

    /// Permits out under unexpired leases at `now`.
    pub fn leased(&mut self, now: f64) -> u32 {
        self.table.view(millis(now)).leased
    }

    /// Holders with at least one permit at `now`.
    pub fn holders(&mut self, now: f64) -> u32 {
        self.table.view(millis(now)).holders
    }
}
