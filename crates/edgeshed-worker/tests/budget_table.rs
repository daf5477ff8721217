//! The lease table of the fleet budget: expiry, idempotent sweeps, learning
//! mode, releases and the fairness rule, with a manual clock (plain ms).
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]

use edgeshed_worker::budget::{fair_share, Answer, FleetView, LeaseRequest, LeaseTable};

const TTL: u64 = 5_000;

fn ask(held: u32, in_use: u32, wanted: u32) -> LeaseRequest {
    LeaseRequest::new(held, in_use, wanted)
}

/// A table past its learning period (started at 0, used from `TTL` on).
fn settled(limit: u32) -> LeaseTable {
    let table = LeaseTable::new(limit, TTL, 0);
    assert!(table.learning(TTL - 1));
    assert!(!table.learning(TTL));
    table
}

#[test]
fn grants_up_to_the_limit_and_no_more() {
    let mut table = settled(12);
    assert_eq!(table.request("a", ask(0, 0, 8), TTL).permits, 8);
    assert_eq!(table.request("b", ask(0, 0, 8), TTL).permits, 4);
    assert_eq!(table.request("c", ask(0, 0, 8), TTL).permits, 0);
    assert_eq!(table.leased(), 12);
}

#[test]
fn an_unrenewed_lease_expires_at_its_ttl_and_frees_its_permits() {
    let mut table = settled(12);
    let t0 = 10_000;
    assert_eq!(table.request("a", ask(0, 0, 12), t0).permits, 12);
    assert_eq!(table.next_expiry(), Some(t0 + TTL));
    assert_eq!(table.expire(t0 + TTL - 1), Some(t0 + TTL));
    assert_eq!(table.leased(), 12);
    assert_eq!(table.request("b", ask(0, 0, 6), t0 + TTL - 1).permits, 0);
    // at the TTL the lease is gone and b gets the permits
    assert_eq!(table.request("b", ask(0, 0, 6), t0 + TTL).permits, 6);
    assert_eq!(table.leased_to("a"), 0);
    assert_eq!(table.leased(), 6);
}

#[test]
fn the_expiry_sweep_is_idempotent() {
    let mut table = settled(12);
    table.request("a", ask(0, 0, 3), 6_000);
    table.request("b", ask(0, 0, 4), 7_000);
    table.request("c", ask(0, 0, 5), 8_000);
    let alarm = 7_000 + TTL;
    assert_eq!(table.expire(alarm), Some(8_000 + TTL));
    let after_one: Vec<(String, u32)> = table.leases().map(|(id, n)| (id.to_owned(), n)).collect();
    // the alarm retried, late and early: nothing more changes
    for retry in [alarm, alarm, alarm - 500, 6_000] {
        assert_eq!(table.expire(retry), Some(8_000 + TTL));
        let again: Vec<(String, u32)> = table.leases().map(|(id, n)| (id.to_owned(), n)).collect();
        assert_eq!(again, after_one);
    }
    assert_eq!(after_one, vec![("c".to_owned(), 5)]);
    assert_eq!(table.expire(8_000 + TTL), None);
    assert_eq!(table.expire(8_000 + TTL), None);
    assert_eq!(table.leased(), 0);
}

#[test]
fn a_renewal_extends_the_lease_and_a_release_gives_permits_back() {
    let mut table = settled(12);
    table.request("a", ask(0, 0, 6), 5_000);
    let renewed = table.request("a", ask(6, 6, 6), 8_000);
    assert_eq!(renewed.permits, 6);
    assert_eq!(table.next_expiry(), Some(8_000 + TTL));
    assert_eq!(table.expire(5_000 + TTL), Some(8_000 + TTL));
    // shrink to what is wanted, then release everything
    assert_eq!(table.request("a", ask(6, 1, 2), 9_000).permits, 2);
    assert_eq!(table.leased(), 2);
    assert_eq!(table.request("a", ask(2, 0, 0), 9_500).permits, 0);
    assert_eq!(table.leased(), 0);
    assert_eq!(table.next_expiry(), None, "a released holder is forgotten");
}

#[test]
fn a_lease_is_never_shrunk_below_the_permits_in_use() {
    let mut table = settled(12);
    table.request("a", ask(0, 0, 12), 5_000);
    table.request("b", ask(0, 0, 12), 5_001);
    table.request("c", ask(0, 0, 12), 5_002);
    // a's fair share is 4, but 10 of its calls are in flight: it may admit
    // up to 4, the table counts 10 until a reports they finished, and a
    // renews soon (a tenth of the TTL) to give the rest back
    let trimmed = table.request("a", ask(12, 10, 12), 6_000);
    assert_eq!((trimmed.permits, trimmed.renew_ms), (4, TTL / 10));
    assert_eq!(table.leased_to("a"), 10);
    assert_eq!(table.request("b", ask(0, 0, 12), 6_001).permits, 2);
    let settled = table.request("a", ask(10, 3, 12), 6_500);
    assert_eq!((settled.permits, settled.renew_ms), (4, TTL / 4 * 3));
    assert_eq!(table.leased_to("a"), 4);
}

#[test]
fn the_table_says_when_to_call_again() {
    let mut table = settled(12);
    // alone with the whole budget: renews at a quarter of the TTL, so a
    // holder that has not asked yet waits at most that long
    assert_eq!(table.request("a", ask(0, 0, 12), 5_000).renew_ms, TTL / 4);
    // b gets nothing now: it is told to come back just after a's renewal
    let b = table.request("b", ask(0, 0, 12), 5_100);
    assert_eq!(b.permits, 0);
    assert_eq!(b.renew_ms, 5_000 + TTL / 4 - 5_100 + TTL / 50);
    // a renews with 2 in flight and is trimmed to its share; b then gets it
    let a = table.request("a", ask(12, 2, 12), 6_250);
    assert_eq!((a.permits, a.renew_ms), (6, TTL / 4 * 3));
    let b = table.request("b", ask(0, 0, 12), 6_350);
    assert_eq!((b.permits, b.renew_ms), (6, TTL / 4 * 3));
}

#[test]
fn contended_permits_converge_to_fair_shares() {
    let mut table = settled(12);
    assert_eq!(table.request("a", ask(0, 0, 12), 5_000).permits, 12);
    assert_eq!(table.request("b", ask(0, 0, 12), 5_001).permits, 0);
    assert_eq!(table.request("c", ask(0, 0, 12), 5_002).permits, 0);
    // a renews with few calls in flight: it keeps its fair share only
    assert_eq!(table.request("a", ask(12, 2, 12), 6_000).permits, 4);
    assert_eq!(table.request("b", ask(0, 0, 12), 6_001).permits, 4);
    assert_eq!(table.request("c", ask(0, 0, 12), 6_002).permits, 4);
    for round in 0..3u64 {
        let now = 7_000 + round * 1_000;
        for id in ["a", "b", "c"] {
            let held = table.leased_to(id);
            assert_eq!(
                table.request(id, ask(held, held, 12), now).permits,
                4,
                "{id}"
            );
        }
    }
    // a small demand gets all it wants; the others split the rest
    assert_eq!(table.request("c", ask(4, 1, 2), 11_000).permits, 2);
    assert_eq!(table.request("a", ask(4, 4, 12), 11_001).permits, 5);
    assert_eq!(table.request("b", ask(4, 4, 12), 11_002).permits, 5);
    assert_eq!(table.leased(), 12);
}

#[test]
fn fair_share_is_max_min_and_work_conserving() {
    let all = |limit: u32, demands: &[u32]| -> Vec<u32> {
        (0..demands.len())
            .map(|i| fair_share(limit, demands, i))
            .collect()
    };
    assert_eq!(all(12, &[12, 12, 12]), vec![4, 4, 4]);
    assert_eq!(all(10, &[6, 6, 6]), vec![4, 3, 3]);
    assert_eq!(all(12, &[1, 12, 12]), vec![1, 6, 5]);
    assert_eq!(all(12, &[3, 2]), vec![3, 2]);
    assert_eq!(all(2, &[5, 5, 5]), vec![1, 1, 0]);
    assert_eq!(all(0, &[5]), vec![0]);
    assert_eq!(fair_share(12, &[4], 3), 0);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2_000))]

    /// Shares never exceed a demand nor sum to more than the limit, use the
    /// whole limit when demand exceeds it, and differ by at most one permit
    /// between holders that did not get their whole demand.
    #[test]
    fn fair_shares_hold_their_rule(limit in 0u32..40, demands in proptest::collection::vec(0u32..30, 1..6)) {
        let shares: Vec<u32> = (0..demands.len()).map(|i| fair_share(limit, &demands, i)).collect();
        let total: u32 = shares.iter().sum();
        let wanted: u32 = demands.iter().sum();
        proptest::prop_assert!(total <= limit);
        proptest::prop_assert_eq!(total, wanted.min(limit));
        for (share, demand) in shares.iter().zip(&demands) {
            proptest::prop_assert!(share <= demand);
        }
        let capped: Vec<u32> = shares.iter().zip(&demands).filter(|(s, d)| s < d).map(|(s, _)| *s).collect();
        if let (Some(lo), Some(hi)) = (capped.iter().min(), shares.iter().max()) {
            proptest::prop_assert!(hi - lo <= 1, "{:?} -> {:?}", demands, shares);
        }
    }
}

#[test]
fn a_restarted_table_learns_for_one_ttl_and_grants_nothing_new() {
    // before the restart: a holds 5, b holds 7 (12 of 12)
    let start = 50_000;
    let mut table = LeaseTable::new(12, TTL, start);
    assert!(table.view(start).learning);
    // a new holder gets nothing while the table learns
    assert_eq!(table.request("c", ask(0, 0, 4), start + 10).permits, 0);
    // renewals re-register what holders report, never more
    let a = table.request("a", ask(5, 2, 9), start + 100);
    assert!(a.learning);
    assert_eq!(a.permits, 5);
    assert_eq!(table.request("b", ask(7, 7, 7), start + 200).permits, 7);
    // a report beyond the limit is capped (the fleet never exceeds it)
    assert_eq!(table.request("d", ask(3, 3, 3), start + 300).permits, 0);
    assert_eq!(
        table.view(start + 300),
        FleetView {
            limit: 12,
            leased: 12,
            holders: 2,
            learning: true
        }
    );
    // learning ends one TTL after the start; then new grants follow the rules
    assert_eq!(table.request("a", ask(5, 0, 0), start + TTL).permits, 0);
    let c = table.request("c", ask(0, 0, 4), start + TTL);
    assert!(!c.learning);
    assert_eq!(c.permits, 4);
    assert!(!table.view(start + TTL).learning);
}

#[test]
fn learning_releases_what_a_holder_no_longer_wants() {
    let mut table = LeaseTable::new(12, TTL, 0);
    assert_eq!(table.request("a", ask(6, 1, 2), 10).permits, 2);
    assert_eq!(table.request("a", ask(2, 0, 0), 20).permits, 0);
    assert_eq!(table.view(20).holders, 0);
}

#[test]
fn a_resumed_table_learns_only_while_old_leases_may_live() {
    // every old lease expired (or none was ever granted): no learning
    let mut fresh = LeaseTable::resumed(12, TTL, 10_000, 0);
    assert!(!fresh.learning(10_000));
    assert_eq!(fresh.request("a", ask(0, 0, 4), 10_000).permits, 4);
    // old leases live until 10_400: learning until then, not a whole TTL
    let table = LeaseTable::resumed(12, TTL, 10_000, 10_400);
    assert!(table.learning(10_399));
    assert!(!table.learning(10_400));
    // a horizon beyond one TTL is capped at one TTL (a lease lasts one TTL)
    let table = LeaseTable::resumed(12, TTL, 10_000, 10_000 + 5 * TTL);
    assert!(table.learning(10_000 + TTL - 1));
    assert!(!table.learning(10_000 + TTL));
}

/// Found by the scale simulation (`budget_scale.rs`, object calls of 1–50 ms
/// at random): a holder's watch and the lease call it sent after it cross on
/// the way, so the watch reaches the object while that ask is kept. A holder
/// watches only with no lease call under way, so such a watch is the older
/// call: it is answered at once and must not cancel the ask (which then
/// never came back: the holder's call timed out, 2.5 s at the default TTL).
#[test]
fn a_watch_that_crossed_a_newer_kept_ask_does_not_cancel_it() {
    let mut table = settled(4);
    assert_eq!(table.ask("a", ask(0, 0, 4), TTL).unwrap().permits, 4);
    assert_eq!(table.ask("b", ask(0, 0, 2), TTL).unwrap().permits, 0);
    // b asks again for its share, and the table keeps the ask
    assert_eq!(table.ask("b", ask(0, 0, 2).waiting(500), TTL + 10), None);
    assert_eq!(table.parked(), 1);
    // b's watch, sent before that ask, arrives now: answered at once
    assert_eq!(table.watch("b", false, 3_000, TTL + 20), Some(true));
    assert_eq!(table.parked(), 1, "the ask is still kept");
    // a gives back what it does not use: b's kept ask is answered
    table.ask("a", ask(4, 2, 2), TTL + 30).unwrap();
    let answers = table.answer_parked(TTL + 30);
    assert!(
        answers.iter().any(
            |answer| matches!(answer, Answer::Lease(id, grant) if id == "b" && grant.permits == 2)
        ),
        "{answers:?}"
    );
}

/// Found by the property test of `budget_rollout.rs`: a holder that asked
/// and got nothing (the limit was leased out), and then stopped wanting,
/// never calls again (it holds nothing to renew), so its demand stayed in
/// the table for a whole TTL and shrank every other holder's fair share.
/// A lease of no permits is forgotten a tenth of the TTL after the time the
/// table told its holder to call again: one that still wants calls by then.
#[test]
fn a_demand_that_got_nothing_and_never_called_again_stops_counting() {
    let mut table = settled(4);
    let t0 = TTL;
    assert_eq!(table.request("a", ask(0, 0, 4), t0).permits, 4);
    let b = table.request("b", ask(0, 0, 4), t0);
    assert_eq!(b.permits, 0);
    // while b may still call, its demand counts: a renewing gets its share
    let soon = t0 + b.renew_ms;
    assert_eq!(table.request("a", ask(4, 0, 4), soon).permits, 2);
    table.request("a", ask(2, 0, 4), soon);
    // b never called again: a tenth of the TTL later it no longer counts
    let later = soon + TTL / 10 + 1;
    assert_eq!(table.request("a", ask(2, 0, 4), later).permits, 4);
    assert_eq!(table.expire(later + TTL), None, "nothing left");
}

/// A holder that says how long its calls last (`calls_ms`, its cutoff: it
/// admits none later than that before its lease expires) gets a lease only
/// a quarter of the TTL longer, so a lease an evicted isolate leaves behind
/// comes back sooner (evicted isolates held 21 to 32 of 100 permits with
/// 5 s leases in `tests/budget_scale.rs`); its permits come back at that
/// shorter expiry. One that does not say gets the whole TTL, and no lease is
/// longer than the TTL.
#[test]
fn a_holder_whose_calls_last_a_second_gets_a_lease_of_that_plus_a_quarter_of_the_ttl() {
    let mut table = settled(4);
    let mut short = ask(0, 0, 2);
    short.calls_ms = 1_000;
    let g = table.request("a", short, TTL);
    assert_eq!((g.permits, g.ttl_ms), (2, 1_000 + TTL / 4));
    assert!(g.renew_ms <= g.ttl_ms);
    assert_eq!(table.lease_ttl(&short), 2_250);
    // the table's record ends then too: the permits come back
    table.expire(TTL + 2_249);
    assert_eq!(table.leased_to("a"), 2);
    table.expire(TTL + 2_250);
    assert_eq!(table.leased_to("a"), 0);
    // a holder that does not say gets the whole TTL
    let g = table.request("b", ask(0, 0, 1), TTL + 2_250);
    assert_eq!(g.ttl_ms, TTL);
    // and calls as long as the TTL do not make a lease longer than it
    let mut long = ask(0, 0, 1);
    long.calls_ms = TTL;
    assert_eq!(table.request("c", long, TTL + 2_250).ttl_ms, TTL);
}
