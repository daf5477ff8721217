//! The table's own costs and rules, below the limiter: how many recovery
//! entries a sweep looks at (counted, not timed), and refunds.

#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use super::*;

const MS: u64 = 1_000_000;
const MINUTE: u64 = 60_000 * MS;

fn table(per_minute: u64, max_keys: usize) -> RateTable<u64> {
    let rate = Rate::per_minute(per_minute)
        .unwrap()
        .with_burst(1)
        .unwrap()
        .with_max_keys(max_keys)
        .unwrap();
    RateTable::new(&rate)
}

/// Spread-out timings, the case where a scan of every entry frees one:
/// 10,000 keys at perMinute 1, one new key every 6 ms, so the table is
/// full from 60 s on and every insert finds exactly one key recovered.
///
/// Measured (this test's counts): 20,000 inserts into the full table look
/// at 20,000 recovery entries, 1.0 per insert, each one heap pop and push
/// (O(log n)). The `retain` sweep this replaced looked at all 10,000
/// entries per insert: 2 × 10^8 over the same run.
#[test]
fn with_spread_out_timings_an_insert_into_a_full_table_looks_at_one_entry_not_all() {
    let mut table = table(1, 10_000);
    let mut now = 0;
    for key in 0..10_000u64 {
        assert!(table.check(Some(&key), now).is_ok());
        now += 6 * MS;
    }
    assert_eq!((table.keys(), table.examined()), (10_000, 0));
    for key in 10_000..30_000u64 {
        let (_, cell) = table.check(Some(&key), now).unwrap();
        assert!(matches!(cell, Cell::Key(_)), "key {key} got a slot");
        now += 6 * MS;
    }
    assert_eq!(table.keys(), 10_000);
    assert_eq!(table.examined(), 20_000);
}

/// Keys that keep calling are re-scheduled when their old time comes up,
/// each paid for by the calls that moved its TAT: never more looks than calls.
#[test]
fn re_scheduled_keys_cost_at_most_one_look_per_call() {
    let mut table = table(60, 1_000); // one per second
    let mut now = 0;
    let mut calls = 0u64;
    for round in 0..20u64 {
        for key in 0..1_000u64 {
            if table.check(Some(&key), now).is_ok() {
                calls += 1;
            }
        }
        // A new key every round finds the table full of keys still limited
        // (each recovers 1 s after its last call), so the sweep looks.
        let stranger = 1_000_000 + round;
        let _ = table.check(Some(&stranger), now);
        now += 1_000 * MS;
    }
    assert_eq!(calls, 20_000);
    assert!(
        table.examined() <= calls + 20,
        "{} looks for {calls} calls",
        table.examined()
    );
}

#[test]
fn a_refund_below_the_schedule_re_schedules_the_key_and_stale_entries_stay_bounded() {
    let mut table = table(1, 2);
    // a: turns at 0, 60 s, 120 s (TAT 180 s, scheduled 60 s).
    for wait in [0, MINUTE, 2 * MINUTE] {
        assert!(table.reserve(Some(&1), 0, wait).is_ok());
    }
    assert!(table.check(Some(&2), 0).is_ok()); // b recovers at 60 s
                                               // At 90 s a new key takes b's slot (a is re-scheduled at 180 s)...
    assert!(matches!(
        table.check(Some(&3), 90_000 * MS),
        Ok((_, Cell::Key(_)))
    ));
    // ...and a gives back its last turn: it recovers at 120 s, before c.
    let cell = table.entries[&1].cell();
    table.refund(Some(&1), cell);
    assert_eq!(table.entries[&1].tat, 2 * MINUTE);
    assert!(matches!(
        table.check(Some(&4), 2 * MINUTE),
        Ok((_, Cell::Key(_)))
    ));
    assert!(!table.entries.contains_key(&1), "a was dropped");

    // Many refunds below the schedule leave at most 2n + 64 entries.
    let mut table = table_with_one_key_reserved_far_ahead();
    for _ in 0..1_000 {
        let cell = table.entries[&1].cell();
        table.refund(Some(&1), cell);
    }
    assert!(table.recoveries.len() <= 2 * table.keys() + 65);
}

/// One key with 1,000 turns reserved at t = 0 (TAT 1,000 minutes), whose
/// schedule a sweep raised to that TAT, so every refund goes below it.
fn table_with_one_key_reserved_far_ahead() -> RateTable<u64> {
    let mut table = table(1, 1);
    for turn in 0..1_000 {
        assert!(table.reserve(Some(&1), 0, turn * MINUTE).is_ok());
    }
    // At 1 min a new key finds the table full: the sweep re-schedules 1.
    assert!(matches!(
        table.check(Some(&2), MINUTE),
        Ok((_, Cell::Overflow))
    ));
    assert_eq!(table.entries[&1].scheduled, 1_000 * MINUTE);
    table
}

#[test]
fn a_refund_goes_to_the_allowance_that_granted_the_turn() {
    let mut table = table(1, 1);
    assert!(table.check(Some(&1), 0).is_ok());
    // 2 is not tracked (the table is full): its turn is the overflow's.
    let (at, cell) = table.reserve(Some(&2), 0, MINUTE).unwrap();
    assert_eq!((at, cell), (0, Cell::Overflow));
    table.refund(Some(&2), cell);
    assert_eq!(table.overflow, Some(0));
    assert_eq!(
        table.entries[&1].tat, MINUTE,
        "the tracked key is untouched"
    );
    // An unkeyed turn goes back to the unkeyed allowance.
    let (_, cell) = table.reserve(None, 0, 0).unwrap();
    table.refund(None, cell);
    assert_eq!(table.unkeyed, Some(0));
}

impl Entry {
    fn cell(&self) -> Cell {
        Cell::Key(self.generation)
    }
}
