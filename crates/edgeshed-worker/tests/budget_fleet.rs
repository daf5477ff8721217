//! The fleet budget end to end in pure Rust: three `LeaseHolder`s against
//! one `LeaseTable` on a manual clock. A property test over random
//! interleavings (asks the table holds, answers lost or delayed, holders
//! killed mid-lease, table restarts, sweeps) checks that the origin never
//! has more calls in flight than the limit, that the fleet never holds more
//! than it, and that nothing is lost (the steady-load simulation is in
//! `budget_batching.rs`, idle capacity in `budget_idle.rs`).
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]

#[path = "support/fleet_model.rs"]
mod model;

use model::{op, Fate, Fleet, Op, Outcome};
use proptest::prelude::*;

/// Found by the property test: a request sent while the holder held 3
/// permits reaches a restarted table only after that lease expired (and the
/// old table leased the permits again); the re-registered lease must not be
/// used.
#[test]
fn a_stale_report_to_a_restarted_table_does_not_over_admit() {
    let mut fleet = Fleet::new(8, 1_000, 6);
    let ops = [
        Op::Advance { ms: 1_000 },
        Op::Poll {
            h: 0,
            queued: 3,
            fate: Fate::Answer,
        },
        Op::Advance { ms: 100 },
        Op::Poll {
            h: 0,
            queued: 4,
            fate: Fate::Delay,
        },
        Op::Advance { ms: 900 },
        Op::Poll {
            h: 1,
            queued: 6,
            fate: Fate::Answer,
        },
        Op::Restart,
        Op::Arrive {
            h: 0,
            outcome: Outcome::Answer,
        },
    ];
    for op in ops {
        fleet.apply(op);
        fleet.check().unwrap();
    }
    fleet.drain().unwrap();
}

/// Holder `h` wants `n` permits: it polls (answered at once) and admits
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

/// A holder killed mid-lease, at any moment of it, with calls that last
/// the origin's whole `timeoutMs`: its calls run on after its death, and no
/// permit of its lease is granted again before they end (the holder admits
/// no call that could outlive its lease). Another holder, whose ask the table
/// holds, gets the permits at the lease's expiry.
#[test]
fn a_holder_killed_mid_lease_never_lets_the_origin_see_more_than_the_limit() {
    let ttl = 1_000;
    for kill_at in (0..2 * ttl).step_by(37) {
        // a may take half the budget (so it renews at 75 % of the TTL), b all
        let mut fleet = Fleet::with_locals(6, ttl, [3, 6, 6]);
        fleet.apply(Op::Advance { ms: ttl });
        let start = fleet.now;
        // a is busy: it keeps its permits in use, one call ending each step
        // and another starting, which may last TIMEOUT
        while fleet.now < start + kill_at {
            fleet.apply(Op::Finish { h: 0 });
            demand(&mut fleet, 0, 3);
            fleet.check().unwrap();
            fleet.apply(Op::Advance { ms: 7 });
        }
        fleet.apply(Op::Kill { h: 0 });
        let mut got = false;
        while fleet.now < start + kill_at + 2 * ttl {
            demand(&mut fleet, 1, 6);
            let checked = fleet.check();
            assert!(
                checked.is_ok(),
                "killed {kill_at} ms into its lease: {checked:?}"
            );
            got |= fleet.nodes[1].calls.len() == 6;
            fleet.apply(Op::Advance { ms: 7 });
        }
        assert!(
            got,
            "killed at {kill_at}: the dead holder's permits came back to b"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3_000))]

    /// Random interleavings of grant, renew, release, held asks, expiry,
    /// lost and late answers, deaths and restarts across 3 holders never
    /// put more calls at the origin than the limit, never over-lease (right
    /// after a restart included), and lose no permit.
    #[test]
    fn the_origin_never_sees_more_than_the_limit(ops in proptest::collection::vec(op(1_000), 1..120)) {
        let mut fleet = Fleet::new(8, 1_000, 6);
        for op in ops {
            fleet.apply(op);
            fleet.check()?;
        }
        fleet.drain()?;
    }
}
