//! Idle capacity is never refused: while the fleet's calls in flight are
//! under the budget, a request that waits for a permit gets one. Three (and
//! sixteen) isolates on a manual clock with the real table and holders
//! (`support/fleet_sim.rs`), 1 ms each way to the table.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]

#[path = "support/fleet_sim.rs"]
mod sim;

use sim::Sim;

const TTL: u64 = 1_000;

/// Runs until every request of the fleet has been admitted or refused and
/// its call ended.
fn settle(sim: &mut Sim) {
    while sim
        .isolates
        .iter()
        .any(|iso| !iso.waiting.is_empty() || !iso.calls.is_empty())
    {
        sim.step();
    }
}

#[test]
fn after_one_isolate_took_the_budget_sequential_requests_over_three_all_succeed() {
    for ttl in [TTL, 5_000] {
        let mut sim = Sim::new(3, 8, 8, ttl, 1);
        sim.service_ms = 50;
        for _ in 0..8 {
            sim.arrive(0);
        }
        settle(&mut sim);
        assert_eq!(sim.totals().1, 8, "the burst was admitted");
        assert_eq!(
            sim.isolates[0].holder.held(sim.now),
            0,
            "and isolate 0, idle, gave the budget back at once"
        );
        sim.service_ms = 5;
        let mut slowest = 0;
        for n in 0..60 {
            let i = n % 3;
            let before = sim.isolates[i].waited_ms;
            sim.arrive(i);
            settle(&mut sim);
            slowest = slowest.max(sim.isolates[i].waited_ms - before);
            assert!(sim.in_flight() <= 1);
            sim.step();
        }
        let (refused, admitted, calls) = sim.totals();
        println!(
            "ttl {ttl}: {admitted} admitted, {refused} refused, {calls} table calls, slowest wait {slowest} ms"
        );
        assert_eq!(refused, 0, "ttl {ttl}: no sequential request is refused");
        // each finds permits at once or after one round trip (isolate 0
        // gave back what it no longer needed when it became idle)
        assert!(slowest <= 10, "ttl {ttl}: waited {slowest} ms");
    }
}

#[test]
fn a_burst_over_three_warmed_isolates_uses_the_whole_budget() {
    let mut sim = Sim::new(3, 8, 8, TTL, 1);
    sim.service_ms = 5;
    for round in 0..5 {
        sim.arrive(round % 3);
        settle(&mut sim);
    }
    // 60 requests at once, 20 per isolate; each local limit admits 8; the
    // calls last longer than a request waits for a permit
    sim.service_ms = 300;
    for i in 0..3 {
        for _ in 0..8 {
            sim.arrive(i);
        }
    }
    sim.run(60);
    assert_eq!(sim.in_flight(), 8, "the whole budget is used");
    settle(&mut sim);
    let (refused, admitted, _) = sim.totals();
    println!(
        "burst: {} admitted, {refused} refused, peak {}",
        admitted - 5,
        sim.peak
    );
    assert_eq!(sim.peak, 8);
    assert!(
        sim.refused_at_in_flight.iter().all(|&n| n == 8),
        "refused only while 8 calls were in flight: {:?}",
        sim.refused_at_in_flight
    );
}

#[test]
fn sixteen_isolates_with_sparse_traffic_share_a_budget_of_eight_without_refusals() {
    // 16 isolates, each getting a request every 160 ms in turn: never more
    // than 8 calls at once, so nothing may be refused
    let mut sim = Sim::new(16, 4, 8, TTL, 1);
    sim.service_ms = 60;
    for t in 0..20_000u64 {
        if t % 10 == 0 {
            sim.arrive((t / 10) as usize % 16);
        }
        sim.step();
    }
    settle(&mut sim);
    let (refused, admitted, calls) = sim.totals();
    println!(
        "16 isolates: {admitted} admitted, {refused} refused, peak {}, {calls} table calls",
        sim.peak
    );
    assert_eq!(refused, 0);
    assert!(sim.peak <= 8);
}

/// What stats show as a budgeted origin's limit
/// ([`LeaseHolder::shown_limit`](edgeshed_worker::budget::LeaseHolder::shown_limit)):
/// idle without a lease, what its next request would ask for (its local
/// limit, at most the fleet's), not the 0 its empty lease would admit
/// (issue 33, 7); in use, what its lease lets it admit.
#[test]
fn an_idle_holder_without_a_lease_shows_what_it_would_ask_for_not_0() {
    use edgeshed_worker::budget::Waiting;
    let mut sim = Sim::new(3, 4, 8, TTL, 1);
    let shown = |sim: &Sim, i: usize| {
        sim.isolates[i]
            .holder
            .shown_limit(sim.now, Waiting::NONE, 8)
    };
    // Before any request: no lease, and nothing would be refused.
    assert_eq!(sim.isolates[0].holder.effective_limit(sim.now), 0);
    assert_eq!(shown(&sim, 0), 4);
    // Capped at the fleet limit as far as the isolate knows it.
    let holder = &sim.isolates[0].holder;
    assert_eq!(holder.shown_limit(sim.now, Waiting::NONE, 3), 3);
    // While requests wait for a permit, the empty lease is what it admits.
    let waiting = Waiting {
        count: 1,
        until: sim.now + 100,
    };
    assert_eq!(holder.shown_limit(sim.now, waiting, 8), 0);
    // In use: the lease it holds.
    sim.service_ms = 300;
    sim.arrive(0);
    sim.arrive(0);
    sim.run(20);
    let held = sim.isolates[0].holder.held(sim.now);
    assert!(held >= 2, "it leased for its two calls: {held}");
    assert_eq!(
        shown(&sim, 0),
        sim.isolates[0].holder.effective_limit(sim.now)
    );
    // Idle again: it gives its lease back, and shows its local limit again.
    settle(&mut sim);
    sim.run(3 * TTL);
    assert_eq!(
        sim.isolates[0].holder.held(sim.now),
        0,
        "the lease was given back"
    );
    assert_eq!(shown(&sim, 0), 4);
}
