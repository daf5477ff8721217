//! The timers on a fake host with a manual clock (native unit tests).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::Timers;
use crate::host::fake::FakePlatform;
use crate::host::Callback;
use core::sync::atomic::{AtomicUsize, Ordering};
use core::task::{Poll, Waker};
use std::sync::Arc;
use std::task::Wake;

/// Counts its wakes.
#[derive(Default)]
struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn counter() -> (Arc<Count>, Waker) {
    let count = Arc::new(Count::default());
    (Arc::clone(&count), Waker::from(count))
}

/// Moves the fake clock to `ms` and delivers the host timers now due, as
/// the host would; returns the wakers they produced, woken.
fn advance(timers: &mut Timers<FakePlatform>, ms: f64) {
    for (callback, id) in timers.platform().advance_to(ms) {
        let wakers = match callback {
            Callback::Fire => timers.fire(id).into_iter().collect(),
            Callback::FireQueue => timers.fire_queue(),
        };
        wakers.into_iter().for_each(Waker::wake);
    }
}

#[test]
fn a_shared_timer_fires_at_its_time_and_not_before() {
    let mut timers = Timers::new(FakePlatform::default());
    let (count, waker) = counter();
    let id = timers.arm(10.0, &waker, false).unwrap();
    advance(&mut timers, 9.0);
    assert_eq!(count.0.load(Ordering::SeqCst), 0);
    assert_eq!(timers.poll(id, &waker), Poll::Pending);
    advance(&mut timers, 10.0);
    assert_eq!(count.0.load(Ordering::SeqCst), 1);
    assert_eq!(timers.poll(id, &waker), Poll::Ready(()));
}

#[test]
fn own_timers_fire_at_their_time_and_not_before() {
    let mut timers = Timers::new(FakePlatform::default());
    let (count, waker) = counter();
    let id = timers.arm(5.0, &waker, true).unwrap();
    advance(&mut timers, 4.0);
    assert_eq!(timers.poll(id, &waker), Poll::Pending);
    advance(&mut timers, 5.0);
    assert_eq!(count.0.load(Ordering::SeqCst), 1);
    assert_eq!(timers.poll(id, &waker), Poll::Ready(()));
}

#[test]
fn shared_timers_fire_in_deadline_order_with_one_host_timer() {
    let mut timers = Timers::new(FakePlatform::default());
    let (late, late_waker) = counter();
    let (early, early_waker) = counter();
    let late_id = timers.arm(20.0, &late_waker, false).unwrap();
    let early_id = timers.arm(10.0, &early_waker, false).unwrap();
    assert_eq!(timers.platform().pending(), 1, "one shared host timer");
    advance(&mut timers, 10.0);
    assert_eq!(early.0.load(Ordering::SeqCst), 1);
    assert_eq!(late.0.load(Ordering::SeqCst), 0);
    assert_eq!(timers.poll(early_id, &early_waker), Poll::Ready(()));
    assert_eq!(timers.poll(late_id, &late_waker), Poll::Pending);
    advance(&mut timers, 20.0);
    assert_eq!(late.0.load(Ordering::SeqCst), 1);
}

#[test]
fn a_cancelled_timer_never_fires_and_leaves_no_host_timer() {
    for own_timer in [false, true] {
        let mut timers = Timers::new(FakePlatform::default());
        let (count, waker) = counter();
        let id = timers.arm(10.0, &waker, own_timer).unwrap();
        drop(timers.cancel(id));
        assert_eq!(timers.platform().pending(), 0, "own timer: {own_timer}");
        advance(&mut timers, 100.0);
        assert_eq!(count.0.load(Ordering::SeqCst), 0, "own timer: {own_timer}");
    }
}

#[test]
fn a_cancelled_shared_timer_among_others_never_fires() {
    let mut timers = Timers::new(FakePlatform::default());
    let (cancelled, cancelled_waker) = counter();
    let (kept, kept_waker) = counter();
    let id = timers.arm(10.0, &cancelled_waker, false).unwrap();
    timers.arm(10.0, &kept_waker, false).unwrap();
    drop(timers.cancel(id));
    advance(&mut timers, 10.0);
    assert_eq!(cancelled.0.load(Ordering::SeqCst), 0);
    assert_eq!(kept.0.load(Ordering::SeqCst), 1);
}

#[test]
fn a_refused_host_timer_arms_nothing() {
    let mut timers = Timers::new(FakePlatform::default());
    let (_, waker) = counter();
    timers.platform().refuse.set(true);
    assert!(timers.arm(10.0, &waker, false).is_none());
    assert!(timers.arm(10.0, &waker, true).is_none());
}
