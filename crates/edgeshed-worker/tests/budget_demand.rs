//! Leases follow demand: a holder asks for what it needs when it needs it,
//! lets the table hold its ask while its requests wait, gives back what it
//! did not need at its renewal, and, once it hears the budget is contended,
//! what it does not use at once; it admits no call that could outlive its
//! lease. One holder, explicit times (ms).
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]

#[path = "support/holder_kit.rs"]
mod kit;

use kit::{grant, w, TTL};

use edgeshed_worker::budget::{
    Grant, HolderConfig, LeaseHolder, Unavailable, Waiting, WatchRequest,
};

const LINGER: u64 = TTL / 20;

fn holder(local: u32) -> LeaseHolder {
    LeaseHolder::new(HolderConfig::new(local, TTL, Unavailable::Shed))
}

/// A holder with `permits` granted at 0, all in use; told the budget is
/// contended if `contended`.
fn busy_in(permits: u32, local: u32, contended: bool) -> LeaseHolder {
    let mut h = holder(local);
    h.poll(0, w(permits)).unwrap();
    h.on_grant(
        0,
        Grant {
            contended,
            ..grant(permits)
        },
    );
    assert!((0..permits).all(|_| h.try_admit(0)));
    h
}

fn busy(permits: u32, local: u32) -> LeaseHolder {
    busy_in(permits, local, true)
}

#[test]
fn uncontended_a_holder_in_use_keeps_its_lease_until_its_renewal_and_an_idle_one_gives_it_back_at_once(
) {
    let mut h = busy_in(8, 8, false);
    for _ in 0..6 {
        h.finish(100);
    }
    assert_eq!(h.next_poll_at(100, w(0)), Some(TTL / 4 * 3));
    for t in (100..TTL / 4 * 3).step_by(11) {
        assert_eq!(h.poll(t, w(0)), None, "{t}");
    }
    // then it keeps what it needed since its last call: all 8 (at 0)
    assert_eq!(h.poll(TTL / 4 * 3, w(0)).unwrap().wanted, 8);
    h.on_grant(TTL / 4 * 3, grant(8));
    // and at the next renewal only the 2 still in use
    let next = TTL / 4 * 3 * 2;
    assert_eq!(h.poll(next, w(0)).unwrap().wanted, 2);
    // an idle holder gives everything back at once, not at its renewal
    let mut idle = busy_in(3, 8, false);
    for _ in 0..2 {
        idle.finish(10);
    }
    assert_eq!(idle.poll(10, w(0)), None, "one call still in flight");
    idle.finish(11);
    assert_eq!(idle.next_poll_at(11, w(0)), Some(11));
    assert_eq!(idle.poll(11, w(0)).unwrap().wanted, 0);
}

#[test]
fn a_holder_with_permits_watches_until_its_renewal_and_a_notice_makes_it_give_back() {
    let mut h = busy_in(8, 8, false);
    // (one call still in flight: an idle holder gives its lease back at once)
    for _ in 0..7 {
        h.finish(100);
    }
    assert_eq!(h.poll(100, w(0)), None);
    let watch = h.watch(100).unwrap();
    assert_eq!(
        watch,
        WatchRequest {
            contended: false,
            wait_ms: TTL / 4 * 3 - 100
        }
    );
    assert!(h.watching());
    assert_eq!(h.watch(101), None, "one watch at a time");
    // another holder waits: the table answers the watch
    h.on_notice(120, true);
    assert!(h.contended() && !h.watching());
    assert_eq!(h.next_poll_at(120, w(0)), Some(120));
    let release = h.poll(120, w(0)).unwrap();
    assert_eq!(release.wanted, 1);
    // a lease call supersedes an open watch; its late answer is ignored
    let mut g = busy_in(2, 8, false);
    g.watch(10).unwrap();
    assert!(g.poll(20, w(3)).is_some());
    assert!(!g.watching());
    g.on_notice(30, true);
    assert!(!g.contended());
}

#[test]
fn contended_a_holder_gives_back_at_once_what_it_does_not_use() {
    let mut h = busy(8, 8);
    // 6 calls end at 100: 2 still in flight, 1 request waiting
    for _ in 0..6 {
        h.finish(100);
    }
    assert_eq!(h.next_poll_at(100, w(1)), Some(100));
    let shrink = h.poll(100, w(1)).unwrap();
    assert_eq!((shrink.wanted, shrink.in_use, shrink.wait_ms), (3, 2, 0));
    h.on_grant(
        102,
        Grant {
            contended: true,
            ..grant(3)
        },
    );
    assert_eq!(h.held(102), 3);
    // the last calls end: everything goes back
    for _ in 0..2 {
        h.finish(150);
    }
    assert_eq!(h.poll(150, w(0)).unwrap().wanted, 0);
}

#[test]
fn uncontended_demand_that_dips_costs_no_call() {
    let mut h = busy_in(8, 8, false);
    for t in (100..3_000).step_by(60) {
        // the demand dips for 30 ms, then waiting requests fill the lease again
        for _ in 0..4 {
            h.finish(t);
        }
        assert_eq!(h.poll(t + 1, w(0)), None);
        assert!((0..4).all(|_| h.try_admit(t + 30)));
        assert_eq!(h.poll(t + 31, w(1)), None, "{t}");
    }
    assert_eq!(h.calls(), 1, "no call until the renewal");
}

#[test]
fn an_ask_may_wait_at_the_table_as_long_as_its_requests_wait() {
    let mut h = holder(8);
    let waiting = Waiting {
        count: 2,
        until: 1_120,
    };
    // cold: the requests' own limit, at most patience (TTL / 10)
    assert_eq!(h.poll(1_000, waiting).unwrap().wait_ms, 120);
    h.on_grant(1_000, grant(2));
    let long = Waiting {
        count: 6,
        until: u64::MAX,
    };
    assert_eq!(
        h.poll(1_001, long),
        None,
        "its requests take the 2 permits first"
    );
    assert!(h.try_admit(1_001) && h.try_admit(1_001));
    assert_eq!(h.poll(1_001, long).unwrap().wait_ms, TTL / 10);
    // while it holds a lease, at most half of what is left of it (it keeps
    // using that lease until the answer renews it)
    let mut late = busy(2, 8);
    let ask = late.poll(TTL - 400, long).unwrap();
    assert_eq!(ask.wait_ms, 200);
}

#[test]
fn no_call_is_admitted_that_could_outlive_the_lease() {
    let cfg = HolderConfig::new(4, TTL, Unavailable::Shed).calls_last(1_500, TTL);
    assert_eq!(cfg.cutoff_ms, 1_500);
    assert_eq!(
        HolderConfig::new(4, TTL, Unavailable::Shed)
            .calls_last(9_000, TTL)
            .cutoff_ms,
        TTL / 2,
        "capped at half the TTL"
    );
    let mut h = LeaseHolder::new(cfg);
    h.poll(0, w(2)).unwrap();
    h.on_grant(0, grant(2));
    // the lease admits until 1.5 s before its expiry
    assert_eq!(h.usable(TTL - 1_501), 2);
    assert_eq!(h.usable(TTL - 1_500), 0);
    assert_eq!(h.held(TTL - 1_500), 2, "still held (and counted)");
    assert!(h.try_admit(10));
    assert!(!h.try_admit(TTL - 1_500));
    // so it renews before then (not at 75 % of the TTL): at expiry - cutoff - linger
    let due = TTL - 1_500 - LINGER;
    assert_eq!(h.next_poll_at(100, w(1)), Some(due));
    assert_eq!(h.poll(due - 1, w(1)), None);
    let renewal = h.poll(due, w(1)).unwrap();
    assert_eq!(renewal.wanted, 2);
}

/// Found by the scale simulation (`budget_scale.rs`, 1,000 isolates on a
/// budget of 100: 62 permits counted at the table for holders that held
/// none): a holder with a call in flight asks for more and is trimmed to
/// nothing (its fair share is 0); the table still counts its call in flight
/// and tells it to call again within a tenth of the TTL. When the call ends
/// the holder holds nothing, but it must still make that call (or the table
/// counts the permit until the lease expires, a whole TTL later); at once,
/// since it is idle then (36 permits stranded on average at 1,000 isolates
/// and 2x waiting for the renewal).
#[test]
fn a_holder_trimmed_to_nothing_reports_when_its_calls_end() {
    for contended in [false, true] {
        let mut h = holder(8);
        h.poll(0, w(1)).unwrap();
        h.on_grant(0, grant(1));
        assert!(h.try_admit(0));
        // it wants 2 and gets 0 usable; the table counts its 1 call in flight
        let ask = h.poll(100, w(1)).unwrap();
        assert_eq!((ask.in_use, ask.wanted), (1, 2));
        let trimmed = Grant {
            renew_ms: TTL / 10,
            contended,
            ..grant(0)
        };
        h.on_grant(110, trimmed);
        assert_eq!(h.held(110), 0);
        assert_eq!(
            h.next_poll_at(150, w(0)),
            Some(100 + TTL / 10),
            "call in flight"
        );
        h.finish(200);
        // idle now: it reports at once, contended or not
        let due = 200;
        assert_eq!(
            h.next_poll_at(200, w(0)),
            Some(due),
            "contended: {contended}"
        );
        let report = h.poll(due, w(0)).unwrap();
        assert_eq!(report.in_use, 0, "and the table frees the permit");
        h.on_grant(
            due + 5,
            Grant {
                contended,
                ..grant(0)
            },
        );
        assert_eq!(h.next_poll_at(due + 5, w(0)), None, "then it is done");
    }
}
