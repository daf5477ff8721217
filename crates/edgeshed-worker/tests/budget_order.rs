//! The budget order of one fan-out request: budgeted calls take their
//! permits one at a time, by origin, whatever order the route lists them
//! in; a call that ends (or is dropped) lets the next go.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]

use edgeshed_worker::budget::BudgetOrder;
use futures_util::future::FutureExt;

#[test]
fn budgeted_calls_take_their_turn_by_origin_and_others_never_wait() {
    // a route listing origins 2, 0, 1, 3; origin 3 has no budget
    let order = BudgetOrder::new([2, 0, 1, 3].into_iter(), |origin| origin != 3);
    let (two, zero, one, three) = (
        order.ticket(2, 0),
        order.ticket(0, 1),
        order.ticket(1, 2),
        order.ticket(3, 3),
    );
    assert!(zero.turn().now_or_never().is_some(), "origin 0 goes first");
    assert!(one.turn().now_or_never().is_none());
    assert!(two.turn().now_or_never().is_none());
    assert!(
        three.turn().now_or_never().is_some(),
        "an unbudgeted call never waits"
    );
    drop(zero);
    assert!(one.turn().now_or_never().is_some());
    assert!(two.turn().now_or_never().is_none());
    // a call dropped before its turn (its request was decided) is no obstacle
    drop(one);
    assert!(two.turn().now_or_never().is_some());
}

#[test]
fn two_calls_to_one_origin_go_one_after_the_other() {
    let order = BudgetOrder::new([5, 5].into_iter(), |_| true);
    let (first, second) = (order.ticket(5, 0), order.ticket(5, 1));
    assert!(first.turn().now_or_never().is_some());
    assert!(second.turn().now_or_never().is_none());
    drop(first);
    assert!(second.turn().now_or_never().is_some());
}
