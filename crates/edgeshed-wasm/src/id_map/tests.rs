use super::*;
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
fn a_stale_id_finds_nothing_when_its_slot_is_reused() {
    let mut registry = Registry::default();
    let first = registry.insert("first");
    assert_eq!(registry.remove(first), Some("first"));
    let second = registry.insert("second");
    assert_ne!(first, second, "the slot's next entry has a new id");
    assert_eq!(registry.get(first), None);
    assert_eq!(registry.remove(first), None);
    assert_eq!(registry.get(second), Some(&"second"));
}

#[wasm_bindgen_test]
fn ids_are_never_handed_out_twice() {
    let mut registry = Registry::default();
    let mut seen = std::collections::HashSet::new();
    let mut live = std::collections::VecDeque::new();
    for round in 0..3_000u32 {
        let id = registry.insert(round);
        assert!(seen.insert(id), "id {id} handed out twice");
        assert!(id <= MAX_ID);
        live.push_back(id);
        // Bursts that grow and drain, so that slots are reused and cut off.
        let drain = round % 500 >= 250 || round % 3 == 0;
        if drain {
            if let Some(old) = live.pop_front() {
                assert!(registry.remove(old).is_some());
                assert!(registry.get(old).is_none());
            }
        }
    }
}

#[wasm_bindgen_test]
fn a_slot_whose_generations_are_used_up_retires() {
    let mut registry = Registry::default();
    let keep = registry.insert("keep");
    let old = registry.insert("old");
    let index = (old & INDEX_MASK) as usize;
    if let Some(slot) = registry.slots.get_mut(index) {
        slot.generation = MAX_GENERATION;
    }
    let last = slab_id(MAX_GENERATION, index);
    assert_eq!(registry.get(last), Some(&"old"));
    assert_eq!(registry.remove(last), Some("old"));
    // The slot cannot carry another id: it is not reused, nor cut off.
    let next = registry.insert("next");
    assert_ne!(next & INDEX_MASK, index as u64);
    assert!(next < SLAB_IDS);
    assert_eq!(registry.get(keep), Some(&"keep"));
}

#[wasm_bindgen_test]
fn slots_cut_off_the_end_come_back_with_new_ids() {
    let mut registry = Registry::default();
    let keep = registry.insert(0);
    let ids: Vec<u64> = (1..100).map(|i| registry.insert(i)).collect();
    for id in &ids {
        registry.remove(*id);
    }
    let again: Vec<u64> = (1..100).map(|i| registry.insert(i)).collect();
    assert!(again.iter().all(|id| !ids.contains(id)));
    assert!(ids.iter().all(|id| registry.get(*id).is_none()));
    assert_eq!(registry.get(keep), Some(&0));
}

#[wasm_bindgen_test]
fn past_the_slab_entries_overflow_into_the_map() {
    let mut registry = Registry::default();
    registry.set_index_limit(2);
    let a = registry.insert("a");
    let b = registry.insert("b");
    let c = registry.insert("c");
    let d = registry.insert("d");
    assert!(a < SLAB_IDS && b < SLAB_IDS);
    assert!(c >= SLAB_IDS && d > c && d <= MAX_ID);
    assert_eq!((registry.get(c), registry.get(d)), (Some(&"c"), Some(&"d")));
    assert_eq!(registry.len(), 4);
    assert_eq!(registry.remove(c), Some("c"));
    assert_eq!(registry.get(c), None);
    assert_eq!(registry.take_where(|value| *value == "d"), vec!["d"]);
    assert_eq!(registry.len(), 2);
    // The freed slot above the limit comes back under a new overflow id.
    let e = registry.insert("e");
    assert!(e >= SLAB_IDS && e != c && e != d);
    assert_eq!(registry.get(e), Some(&"e"));
    // A slab id never reaches a slot above the limit.
    assert_eq!(registry.get(2), None);
    assert_eq!(registry.get(3), None);
}

#[wasm_bindgen_test]
fn the_slab_shrinks_back_after_a_burst() {
    let mut registry = Registry::default();
    let ids: Vec<u64> = (0..100_000).map(|i| registry.insert(i)).collect();
    let peak = registry.capacity();
    for id in ids.iter().skip(10) {
        registry.remove(*id);
    }
    assert_eq!(registry.len(), 10);
    assert!(
        registry.capacity() <= 4 * MIN_CAPACITY,
        "capacity {} after the burst (peak {peak})",
        registry.capacity()
    );
    assert!(registry.free.capacity() <= 4 * MIN_CAPACITY);
}

#[wasm_bindgen_test]
fn take_where_removes_the_matching_entries() {
    let mut registry = Registry::default();
    let ids: Vec<u64> = (0..10).map(|i| registry.insert(i)).collect();
    let mut taken = registry.take_where(|value| value % 2 == 0);
    taken.sort_unstable();
    assert_eq!(taken, vec![0, 2, 4, 6, 8]);
    assert_eq!(registry.len(), 5);
    assert!(ids
        .iter()
        .skip(1)
        .step_by(2)
        .all(|id| registry.contains(*id)));
}

#[wasm_bindgen_test]
fn ids_round_trip_through_javascript_numbers() {
    assert_eq!(id_from_js(id_to_js(MAX_ID)), Some(MAX_ID));
    assert_eq!(id_from_js(-1.0), None);
    assert_eq!(id_from_js(1.5), None);
    assert_eq!(id_from_js(f64::NAN), None);
}
