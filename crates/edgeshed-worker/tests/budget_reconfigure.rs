//! Reconfiguration in place (`budget/table/reconfigure.rs`): a changed
//! limit, TTL or adaptive section is applied to the table the object holds,
//! the newest deploy version winning; leases, kept asks and the learning
//! state stay. Manual clock: plain milliseconds handed to the table.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]

use edgeshed::limit::adaptive::{AnyLimit, Bounds};
use edgeshed_worker::budget::{
    Answer, BudgetSetting, DeployVersion, LeaseRequest, LeaseTable, LimitSetting,
};

const TTL: u64 = 1_000;

fn ask(held: u32, in_use: u32, wanted: u32) -> LeaseRequest {
    LeaseRequest::new(held, in_use, wanted)
}

fn v(timestamp_ms: u64) -> DeployVersion {
    DeployVersion::new(timestamp_ms, &format!("version-{timestamp_ms}"))
}

/// A table of `limit` past its learning period at `TTL`, in force for
/// version 1.
fn settled(limit: u32) -> LeaseTable {
    let mut table = LeaseTable::new(limit, TTL, 0);
    assert!(!table.configure(&v(1), &BudgetSetting::fixed(limit, TTL), TTL));
    assert!(!table.learning(TTL));
    table
}

#[test]
fn a_raised_limit_keeps_every_lease_and_grants_the_new_room_at_once() {
    let mut table = settled(8);
    let now = TTL;
    assert_eq!(table.request("a", ask(0, 0, 8), now).permits, 8);
    // b waits at the table for permits the fleet does not have
    assert!(table.ask("b", ask(0, 0, 4).waiting(100), now).is_none());
    assert_eq!(table.parked(), 1);
    assert!(table.configure(&v(2), &BudgetSetting::fixed(12, TTL), now + 10));
    assert_eq!(table.limit(), 12);
    assert_eq!(table.leased_to("a"), 8, "a's lease is kept");
    assert!(!table.learning(now + 10), "no learning mode");
    let answers = table.answer_parked(now + 10);
    assert_eq!(answers.len(), 1, "the kept ask is served: {answers:?}");
    let served = answers.iter().find_map(|answer| match answer {
        Answer::Lease(holder, grant) => Some((holder.as_str(), grant.permits)),
        Answer::Notice(..) => None,
    });
    assert_eq!(served, Some(("b", 4)), "{answers:?}");
    assert_eq!(table.leased(), 12);
}

#[test]
fn a_lowered_limit_grants_nothing_until_the_leases_fall_under_it() {
    let mut table = settled(12);
    let now = TTL;
    assert_eq!(table.request("a", ask(0, 0, 12), now).permits, 12);
    assert!(table.configure(&v(2), &BudgetSetting::fixed(8, TTL), now));
    assert_eq!(table.limit(), 8);
    assert_eq!(table.leased_to("a"), 12, "nothing is recalled");
    // b finds no room while a holds more than the new limit
    let b = table.request("b", ask(0, 0, 4), now + 1);
    assert_eq!(b.permits, 0);
    // a renews with 10 calls in flight: trimmed to its share for new calls,
    // but counted with all 10 (a call cannot be recalled), and told to call
    // again soon
    let a = table.request("a", ask(12, 10, 12), now + 2);
    assert_eq!(a.permits, 4, "its share of 8 against b's 4");
    assert_eq!(table.leased_to("a"), 10, "counted at its calls in flight");
    assert!(a.renew_ms <= TTL / 10, "renew soon: {}", a.renew_ms);
    assert_eq!(table.request("b", ask(0, 0, 4), now + 3).permits, 0);
    assert!(table.leased() <= 12);
    // a's old calls end: the sum comes under 8 and b gets its share
    let a = table.request("a", ask(10, 3, 4), now + 50);
    assert_eq!(a.permits, 4);
    assert_eq!(table.leased_to("a"), 4);
    assert_eq!(table.request("b", ask(0, 0, 4), now + 51).permits, 4);
    assert_eq!(table.leased(), 8);
    assert!(!table.learning(now + 51));
}

#[test]
fn a_changed_ttl_applies_to_new_grants_and_old_leases_keep_their_expiry() {
    let mut table = settled(8);
    let now = TTL;
    table.request("a", ask(0, 0, 4), now);
    assert!(table.configure(&v(2), &BudgetSetting::fixed(8, 3 * TTL), now + 10));
    assert_eq!(table.ttl_ms(), 3 * TTL);
    assert_eq!(table.next_expiry(), Some(now + TTL), "a's lease as granted");
    let b = table.request("b", ask(0, 0, 4), now + 20);
    assert_eq!((b.permits, b.ttl_ms), (4, 3 * TTL));
    assert_eq!(table.expire(now + TTL), Some(now + 20 + 3 * TTL));
    assert_eq!(table.leases().collect::<Vec<_>>(), vec![("b", 4)]);
}

#[test]
fn adaptive_switched_on_changed_and_off_in_place() {
    let mut table = settled(8);
    let now = TTL;
    table.request("a", ask(0, 0, 6), now);
    let bounds = Bounds::new(8, 2, 64).unwrap();
    let on = BudgetSetting {
        limit: LimitSetting::adaptive("gradient2", bounds).unwrap(),
        ttl_ms: TTL,
    };
    assert!(table.configure(&v(2), &on, now + 1));
    let fleet = table.fleet_limit().unwrap();
    assert!(
        fleet.draining(),
        "its first window is a drain, as a new table's"
    );
    assert_eq!(table.limit(), 2);
    let first_epoch = fleet.epoch();
    assert_eq!(table.leased_to("a"), 6, "kept");
    assert_eq!(table.setting(), on);
    // another algorithm: a new fleet limit, its epochs after the old one's
    let vegas = BudgetSetting {
        limit: LimitSetting::adaptive("vegas", bounds).unwrap(),
        ttl_ms: TTL,
    };
    assert!(table.configure(&v(3), &vegas, now + 2));
    assert!(table.fleet_limit().unwrap().epoch() > first_epoch);
    assert_eq!(
        table.setting().limit,
        LimitSetting::of(&AnyLimit::named("vegas", bounds).unwrap())
    );
    // off again: the fixed limit, epoch 0
    assert!(table.configure(&v(4), &BudgetSetting::fixed(10, TTL), now + 3));
    assert!(table.fleet_limit().is_none());
    assert_eq!(table.limit(), 10);
    let grant = table.request("b", ask(0, 0, 4), now + 4);
    assert_eq!((grant.permits, grant.epoch), (4, 0));
    assert_eq!(table.leased_to("a"), 6);
    assert!(!table.learning(now + 4));
}

#[test]
fn the_newest_version_wins_and_older_calls_are_served_under_it() {
    let mut table = settled(8);
    let eight = BudgetSetting::fixed(8, TTL);
    let twelve = BudgetSetting::fixed(12, TTL);
    let mut now = TTL;
    assert!(table.configure(&v(2), &twelve, now));
    // the old version keeps calling, alternating with the new one, for 3 TTLs
    for step in 0..60u64 {
        now += 50;
        let (version, setting) = if step % 2 == 0 {
            (v(1), eight)
        } else {
            (v(2), twelve)
        };
        assert!(
            !table.configure(&version, &setting, now),
            "step {step}: no change"
        );
        assert_eq!(table.limit(), 12, "step {step}");
        assert_eq!(table.version(), &v(2));
    }
    // a rollback: only the old version calls now; once the new one has been
    // silent for one TTL, the old configuration is applied
    let last_new = now;
    now += 50;
    assert!(!table.configure(&v(1), &eight, now));
    assert!(!table.configure(&v(1), &eight, last_new + TTL - 1));
    assert_eq!(table.limit(), 12);
    assert!(table.configure(&v(1), &eight, last_new + TTL));
    assert_eq!(table.limit(), 8);
    assert_eq!(table.version(), &v(1));
}

#[test]
fn unversioned_callers_keep_the_configuration_in_force_until_its_callers_are_gone() {
    let unversioned = DeployVersion::UNVERSIONED;
    let eight = BudgetSetting::fixed(8, TTL);
    let twelve = BudgetSetting::fixed(12, TTL);
    let mut table = LeaseTable::new(8, TTL, 0);
    let mut now = TTL;
    assert!(!table.configure(&unversioned, &eight, now));
    for step in 0..40u64 {
        now += 50;
        let setting = if step % 2 == 0 { twelve } else { eight };
        assert!(!table.configure(&unversioned, &setting, now), "step {step}");
        assert_eq!(table.limit(), 8);
    }
    // the old configuration's callers stop: one TTL later the new one wins
    let last_old = now;
    assert!(!table.configure(&unversioned, &twelve, last_old + TTL - 1));
    assert!(table.configure(&unversioned, &twelve, last_old + TTL));
    assert_eq!(table.limit(), 12);
    // a versioned caller wins over unversioned ones at once
    assert!(table.configure(&v(5), &eight, last_old + TTL + 1));
    assert_eq!(table.limit(), 8);
}

#[test]
fn reconfiguring_never_starts_or_extends_learning_mode() {
    // a table still learning (restarted at 0) learns until its TTL, however
    // it is reconfigured meanwhile
    let mut table = LeaseTable::new(8, TTL, 0);
    assert!(table.learning(10));
    assert!(table.configure(&v(2), &BudgetSetting::fixed(12, 4 * TTL), 10));
    assert!(table.learning(TTL - 1));
    assert!(!table.learning(TTL), "learning ends when it would have");
    // a table that knows its leases stays out of it
    for (i, limit) in [4u32, 16, 8].into_iter().enumerate() {
        let at = TTL + i as u64;
        assert!(table.configure(&v(3 + i as u64), &BudgetSetting::fixed(limit, TTL), at));
        assert!(!table.learning(at));
        assert!(!table.request("a", ask(0, 0, 1), at).learning);
    }
}

/// Random alternating configurations: the sum the table counts rises above
/// the limit in force only through a lowered limit, never through a grant,
/// and never above the largest limit; every holder's calls in flight stay
/// counted.
#[test]
fn random_alternating_configurations_never_grant_above_the_limit_in_force() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let limits = [4u32, 8, 12];
    let mut table = settled(8);
    let mut in_use = [0u32; 3];
    let mut now = TTL;
    for step in 0..20_000 {
        now += next(40);
        let h = next(3) as usize;
        let id = ["a", "b", "c"][h];
        let version = next(6);
        let limit = limits[next(3) as usize];
        table.configure(&v(version), &BudgetSetting::fixed(limit, TTL), now);
        let before = table.leased();
        let held = table.leased_to(id);
        // calls end, then the holder asks for what it wants
        in_use[h] = in_use[h].min(held).saturating_sub(next(3) as u32);
        let wanted = next(9) as u32;
        let grant = table.request(id, ask(held, in_use[h], wanted), now);
        in_use[h] = in_use[h].max(grant.permits.min(wanted));
        let after = table.leased();
        assert!(
            after <= before.max(table.limit()),
            "step {step}: {before} -> {after} under a limit of {}",
            table.limit()
        );
        assert!(after <= 12, "step {step}: {after}");
        assert!(
            table.leased_to(id) >= in_use[h],
            "step {step}: calls uncounted"
        );
        table.expire(now);
    }
}
