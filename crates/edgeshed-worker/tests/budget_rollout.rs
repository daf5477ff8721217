//! Reconfiguration in place with real holders (the fleet model of
//! `budget_fleet.rs`: lost and late answers, kept asks, deaths, restarts):
//! a limit lowered and raised again never lets the origin see more than the
//! highest limit. Manual clock (plain ms); the table's own rules are in
//! `budget_reconfigure.rs`.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]

#[path = "support/fleet_model.rs"]
mod model;

use edgeshed_worker::budget::{BudgetSetting, DeployVersion};
use model::{op, Fate, Fleet, Op};
use proptest::prelude::*;

const TTL: u64 = 1_000;

fn v(timestamp_ms: u64) -> DeployVersion {
    DeployVersion::new(timestamp_ms, &format!("version-{timestamp_ms}"))
}

/// Holder `h` wants `n` more calls: it polls (answered at once) and admits
/// what its lease allows.
fn demand(fleet: &mut Fleet, h: usize, n: u32) {
    fleet.apply(Op::Poll {
        h,
        queued: n,
        fate: Fate::Answer,
    });
    for _ in 0..n {
        fleet.apply(Op::Admit { h });
    }
}

/// Real holders: a holds all 12 permits in use; a new version lowers the
/// limit to 4 and a renews (trimmed, still counted at its 12 calls); a
/// newer one raises it to 12 again while a's calls still run: b gets
/// nothing until they end, so the origin never sees more than 12.
#[test]
fn twelve_then_four_then_twelve_does_not_grant_calls_still_in_flight_again() {
    let mut fleet = Fleet::new(12, TTL, 12);
    fleet.apply(Op::Advance { ms: TTL });
    demand(&mut fleet, 0, 12);
    assert_eq!(fleet.nodes[0].calls.len(), 12);
    fleet
        .table
        .configure(&v(2), &BudgetSetting::fixed(4, TTL), fleet.now);
    fleet.apply(Op::Advance { ms: TTL / 4 });
    fleet.apply(Op::Poll {
        h: 0,
        queued: 0,
        fate: Fate::Answer,
    });
    assert_eq!(
        fleet.table.leased_to("isolate-a"),
        12,
        "counted at its calls in flight"
    );
    fleet
        .table
        .configure(&v(3), &BudgetSetting::fixed(12, TTL), fleet.now);
    demand(&mut fleet, 1, 12);
    fleet.check().unwrap();
    let at_origin: usize = fleet.nodes.iter().map(|node| node.calls.len()).sum();
    assert_eq!(at_origin, 12, "b waits for a's calls");
    // a's calls end (at the origin's timeout) and, idle, it gives its
    // whole lease back: b gets the 12
    fleet.apply(Op::Advance { ms: model::TIMEOUT });
    fleet.apply(Op::Poll {
        h: 0,
        queued: 0,
        fate: Fate::Answer,
    });
    demand(&mut fleet, 1, 12);
    fleet.check().unwrap();
    assert_eq!(fleet.nodes[1].calls.len(), 12);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_000))]

    /// The fleet model of `budget_fleet.rs` (real holders, lost and late
    /// answers, kept asks, deaths, restarts) with the configuration moving
    /// between 12, 4 and 12 again under random versions: the origin never
    /// sees more than 12, the largest limit (a lease trimmed by the 4 and
    /// counted below its calls in flight would let the next 12 grant them
    /// again), and nothing is lost.
    #[test]
    fn a_limit_lowered_then_raised_never_over_admits(
        steps in proptest::collection::vec((op(1_000), 0..4u64, 0..3usize), 1..120),
    ) {
        let mut fleet = Fleet::new(12, 1_000, 12);
        for (op, version, limit) in steps {
            let limit = [12, 4, 12][limit];
            fleet.table.configure(&v(version), &BudgetSetting::fixed(limit, 1_000), fleet.now);
            fleet.apply(op);
            fleet.check()?;
        }
        fleet.drain()?;
    }
}
