//! The slab's memory policy: lowest slot first, trimmed tail, shrinking
//! buffers, and keys that stay valid (or harmlessly stale) through all of it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use super::super::keys::KeySlot;
use super::{Place as Key, Standing, Tag, Waiters, FLOOR};
use crate::criticality::Criticality;
use core::task::Waker;

fn push(waiters: &mut Waiters) -> Key {
    push_as(waiters, Criticality::Default)
}

fn push_as(waiters: &mut Waiters, rank: Criticality) -> Key {
    waiters.push(
        Waker::noop().clone(),
        Tag {
            rank,
            key: KeySlot::KEYLESS,
        },
        None,
    )
}

/// Grants the oldest waiter of the most critical rank.
fn grant_front(waiters: &mut Waiters) -> Option<Option<Waker>> {
    let rank = waiters.top_rank()?;
    let index = waiters.end(KeySlot::KEYLESS, rank, false)?;
    waiters
        .take_out(index, Standing::Granted)
        .map(|(waker, _)| waker)
}

/// Grants every queued waiter in turn; returns the keys (among `keys`) in
/// the order they were granted.
fn grant_all(waiters: &mut Waiters, keys: &[Key]) -> Vec<Key> {
    let mut order = Vec::new();
    while grant_front(waiters).is_some() {
        let granted = keys
            .iter()
            .copied()
            .find(|key| {
                !order.contains(key)
                    && matches!(waiters.standing_mut(*key), Some(Standing::Granted))
            })
            .expect("one more key granted");
        order.push(granted);
    }
    order
}

#[test]
fn a_new_waiter_takes_the_lowest_free_slot() {
    let mut waiters = Waiters::default();
    let keys: Vec<Key> = (0..6).map(|_| push(&mut waiters)).collect();
    for &index in &[3, 1, 4] {
        waiters.free(keys[index]).unwrap();
    }
    assert_eq!(push(&mut waiters).index, 1);
    assert_eq!(push(&mut waiters).index, 3);
    assert_eq!(push(&mut waiters).index, 4);
    assert_eq!(push(&mut waiters).index, 6);
}

#[test]
fn free_slots_at_the_end_are_dropped_and_an_empty_queue_holds_nothing() {
    let mut waiters = Waiters::default();
    let keys: Vec<Key> = (0..10).map(|_| push(&mut waiters)).collect();
    waiters.free(keys[9]).unwrap();
    waiters.free(keys[7]).unwrap();
    assert_eq!(waiters.slab.slots(), 9, "the free last slot is dropped");
    waiters.free(keys[8]).unwrap();
    assert_eq!(waiters.slab.slots(), 7, "slots 8 and 7 are dropped");
    for key in &keys[..7] {
        waiters.free(*key).unwrap();
    }
    assert_eq!(waiters.slab.slots(), 0);
    assert_eq!(waiters.slab.free_entries(), 0);
    assert_eq!((waiters.len(), waiters.slab.occupied()), (0, 0));
}

#[test]
fn a_stale_key_stays_stale_after_its_slot_is_trimmed_and_rebuilt() {
    let mut waiters = Waiters::default();
    let first = push(&mut waiters);
    let stale = push(&mut waiters);
    waiters.free(stale).unwrap();
    assert_eq!(waiters.slab.slots(), 1);
    let fresh = push(&mut waiters);
    assert_eq!(fresh.index, stale.index, "the same slot, rebuilt");
    assert!(waiters.standing_mut(stale).is_none());
    assert!(waiters.free(stale).is_none());
    assert!(matches!(
        waiters.standing_mut(fresh),
        Some(Standing::Waiting(_))
    ));
    // And after the whole slab was emptied and regrown.
    waiters.free(first).unwrap();
    waiters.free(fresh).unwrap();
    let again = push(&mut waiters);
    assert_eq!(again.index, first.index);
    assert!(waiters.standing_mut(first).is_none());
    assert!(waiters.standing_mut(again).is_some());
}

#[test]
fn fifo_order_survives_slot_reuse_and_trimming() {
    let mut waiters = Waiters::default();
    let early: Vec<Key> = (0..100).map(|_| push(&mut waiters)).collect();
    // Free the front half: their slots are reused by later waiters, which
    // must still queue behind the earlier ones still waiting.
    for key in &early[..50] {
        waiters.free(*key).unwrap();
    }
    let late: Vec<Key> = (0..60).map(|_| push(&mut waiters)).collect();
    assert!(late.iter().take(50).all(|key| key.index < 50));
    let expected: Vec<Key> = early[50..].iter().chain(&late).copied().collect();
    assert_eq!(grant_all(&mut waiters, &expected), expected);
}

#[test]
fn a_burst_shrinks_back_to_its_live_waiters() {
    let mut waiters = Waiters::default();
    let keys: Vec<Key> = (0..100_000).map(|_| push(&mut waiters)).collect();
    assert!(waiters.capacity() >= 100_000);
    // Out of order: every third from the back, then the rest, but keep the
    // first ten.
    for key in keys[10..].iter().rev().step_by(3) {
        waiters.free(*key).unwrap();
    }
    for key in keys[10..].iter().rev() {
        let _ = waiters.free(*key);
    }
    assert_eq!(waiters.len(), 10);
    assert!(
        waiters.capacity() <= 4 * FLOOR,
        "capacity {} for 10 live waiters",
        waiters.capacity()
    );
    // The ten survivors still hold valid keys, in FIFO order.
    assert_eq!(grant_all(&mut waiters, &keys[..10]), keys[..10]);
}

#[test]
fn stale_free_list_entries_are_swept() {
    let mut waiters = Waiters::default();
    let keys: Vec<Key> = (0..1_000).map(|_| push(&mut waiters)).collect();
    // Free slots 1..999 from the front: each lands in the free list, and
    // the last one frees the tail, which trims all of them away.
    for key in &keys[1..] {
        waiters.free(*key).unwrap();
    }
    assert_eq!(waiters.slab.slots(), 1);
    assert!(
        waiters.slab.free_entries() <= FLOOR + 2,
        "{}",
        waiters.slab.free_entries()
    );
    assert!(waiters.capacity() <= 4 * FLOOR, "{}", waiters.capacity());
    assert_eq!(push(&mut waiters).index, 1);
}

#[test]
fn the_most_critical_rank_is_served_first_and_fifo_within_it() {
    let mut waiters = Waiters::default();
    let shed = push_as(&mut waiters, Criticality::Sheddable);
    let first = push_as(&mut waiters, Criticality::Default);
    let critical = push_as(&mut waiters, Criticality::Critical);
    let second = push_as(&mut waiters, Criticality::Default);
    let keys = [shed, first, critical, second];
    assert_eq!(
        grant_all(&mut waiters, &keys),
        [critical, first, second, shed]
    );
}

#[test]
fn each_key_has_a_fifo_flow_that_leaves_the_flows_once_empty() {
    let mut waiters = Waiters::default();
    let slot = |n: u32| KeySlot::for_test(n);
    let tag = |key| Tag {
        rank: Criticality::Default,
        key,
    };
    let a1 = waiters.push(Waker::noop().clone(), tag(slot(3)), None);
    let b1 = waiters.push(Waker::noop().clone(), tag(slot(7)), None);
    let a2 = waiters.push(Waker::noop().clone(), tag(slot(3)), None);
    assert_eq!(waiters.flows(Criticality::Default), [slot(3), slot(7)]);
    let ends = |waiters: &Waiters, key| {
        let rank = Criticality::Default;
        (waiters.end(key, rank, false), waiters.end(key, rank, true))
    };
    assert_eq!(ends(&waiters, slot(3)), (Some(a1.index), Some(a2.index)));
    assert_eq!(ends(&waiters, slot(7)), (Some(b1.index), Some(b1.index)));
    waiters.free(a1).unwrap();
    assert_eq!(ends(&waiters, slot(3)), (Some(a2.index), Some(a2.index)));
    waiters.free(b1).unwrap();
    assert_eq!(waiters.flows(Criticality::Default), [slot(3)]);
    waiters.free(a2).unwrap();
    assert!(waiters.flows(Criticality::Default).is_empty());
    assert_eq!(waiters.top_rank(), None);
    assert!(waiters.flows.is_empty(), "the per-key lists are trimmed");
}
