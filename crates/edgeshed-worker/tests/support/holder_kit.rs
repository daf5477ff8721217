//! What the one-holder tests (`budget_holder.rs`, `budget_demand.rs`) build
//! their calls from: a grant of a 5 s lease, and waiting requests.
#![allow(dead_code)]

use edgeshed_worker::budget::{Grant, Waiting};

/// The lease TTL of these tests.
pub const TTL: u64 = 5_000;

/// A grant of `permits` for one TTL, renewed at 75 % of it.
pub fn grant(permits: u32) -> Grant {
    Grant {
        permits,
        ttl_ms: TTL,
        renew_ms: TTL / 4 * 3,
        learning: false,
        contended: false,
        epoch: 0,
    }
}

/// `count` requests waiting, willing to wait as long as it takes.
pub fn w(count: u32) -> Waiting {
    Waiting {
        count,
        until: u64::MAX,
    }
}
