#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! The rate limit's key table under hostile traffic, on the manual clock: a
//! full table degrades to one shared overflow allowance instead of locking
//! new keys out, a key that used the overflow gets no fresh burst when a
//! slot frees, and refunds neither hide a recovered key from the sweep nor
//! credit a key's later entry.

mod support;

use edgeshed::admission::Call;
use edgeshed::rate_limit::{Rate, RateLimitLayer, RateLimiter};
use edgeshed::time::{Clock, ManualClock};
use edgeshed::Key;
use std::task::Poll;
use std::time::Duration;
use support::poll_once;
use tower::ServiceExt;
use tower_layer::Layer;

const MS: Duration = Duration::from_millis(1);
const SECOND: Duration = Duration::from_secs(1);
const MINUTE: Duration = Duration::from_secs(60);

fn limiter(rate: Rate) -> (RateLimiter<ManualClock>, ManualClock) {
    let clock = ManualClock::new();
    (RateLimiter::new(rate, clock.clone()), clock)
}

#[test]
fn a_flood_of_fresh_keys_at_one_per_minute_leaves_tracked_keys_alone_and_new_keys_share_one_overflow_allowance(
) {
    // The numbers: perMinute 1, the default 10,000 keys, and about
    // 167 fresh keys a second (one every 6 ms) for a minute and a half.
    let (limiter, clock) = limiter(Rate::per_minute(1).unwrap().with_burst(1).unwrap());
    let existing = Key::from("existing");
    assert!(limiter.check_key(&existing).is_ok());
    for stranger in 0..9_999 {
        assert!(limiter
            .check_key(&Key::from(format!("s{stranger}")))
            .is_ok());
    }
    assert_eq!(
        limiter.stats().keys,
        10_000,
        "the table is full of limited keys"
    );

    // A new client's first request: admitted, on the overflow allowance.
    let client = Key::from("client");
    let first = limiter.check_key(&client);
    assert!(first.is_ok(), "the new client was locked out: {first:?}");
    assert_eq!(limiter.stats().overflow, 1);
    let overflow_used_at = clock.now();

    // The flood goes on: 15,000 more fresh keys over 90 s. Each finds the
    // table full of still-limited keys or, once they recover, takes a slot.
    let mut refused_strangers = 0u64;
    let mut during_flood = Vec::new();
    for stranger in 9_999..24_999 {
        clock.advance(6 * MS);
        let elapsed = clock.now().saturating_duration_since(overflow_used_at);
        if let Err(refused) = limiter.check_key(&Key::from(format!("s{stranger}"))) {
            refused_strangers += 1;
            // Never longer than the overflow allowance's own next turn.
            assert!(refused.retry_after().unwrap() <= MINUTE - elapsed + MS);
        }
        // The key that was in the table all along: its own allowance, to the millisecond.
        if stranger == 12_000 {
            let refused = limiter.check_key(&existing).unwrap_err();
            during_flood.push(refused.retry_after().unwrap());
        }
        if stranger == 19_999 {
            assert!(
                limiter.check_key(&existing).is_ok(),
                "its next turn, 60 s after its first"
            );
        }
        assert!(limiter.stats().keys <= 10_000);
    }
    // 12,001 − 9,999 = 2,002 steps of 6 ms in: 12.012 s after t = 0.
    assert_eq!(during_flood, [MINUTE - Duration::from_millis(12_012)]);
    let stats = limiter.stats();
    assert!(
        refused_strangers > 0,
        "the flood used up the overflow allowance"
    );
    assert_eq!(stats.keys_refused, refused_strangers);
    assert!(
        stats.overflow > refused_strangers,
        "allowed overflow calls too"
    );
}

#[test]
fn a_second_new_client_during_a_flood_waits_only_for_the_overflow_allowance() {
    let rate = Rate::per_minute(1)
        .unwrap()
        .with_burst(1)
        .unwrap()
        .with_max_keys(10)
        .unwrap();
    let (limiter, clock) = limiter(rate);
    for stranger in 0..10 {
        assert!(limiter
            .check_key(&Key::from(format!("s{stranger}")))
            .is_ok());
    }
    clock.advance(SECOND);
    // An attacker's fresh key takes the one overflow turn...
    assert!(limiter.check_key(&Key::from("s10")).is_ok());
    // ...so a legitimate new client shares what is left: its next turn.
    clock.advance(SECOND);
    let refused = limiter.check_key(&Key::from("client")).unwrap_err();
    assert_eq!(refused.retry_after(), Some(MINUTE - SECOND));
    // The strangers recover at 60 s; the overflow allowance at 61 s. A slot
    // that frees before then does not reset what the overflow calls used.
    clock.advance(MINUTE - 2 * SECOND);
    assert_eq!(
        limiter
            .check_key(&Key::from("s10"))
            .unwrap_err()
            .retry_after(),
        Some(SECOND),
        "the overflow key's state follows it into the table"
    );
    clock.advance(SECOND);
    assert!(limiter.check_key(&Key::from("client")).is_ok());
    assert!(limiter.check_key(&Key::from("s10")).is_ok());
}

#[test]
fn a_key_that_used_the_overflow_allowance_gets_no_fresh_burst_when_a_slot_frees() {
    let rate = Rate::per_second(1)
        .unwrap()
        .with_burst(3)
        .unwrap()
        .with_max_keys(2)
        .unwrap();
    let (limiter, clock) = limiter(rate);
    let (a, b, x) = (Key::from("a"), Key::from("b"), Key::from("x"));
    assert!(limiter.check_key(&a).is_ok()); // a recovers at 1 s
    for _ in 0..3 {
        assert!(limiter.check_key(&b).is_ok()); // b at 3 s
    }
    // x is not tracked: it spends the overflow allowance's burst.
    for call in 0..3 {
        assert!(limiter.check_key(&x).is_ok(), "overflow call {call}");
    }
    assert_eq!(
        limiter.check_key(&x).unwrap_err().retry_after(),
        Some(SECOND)
    );
    assert_eq!(limiter.stats().overflow, 4);
    // At 1 s a recovers and x takes its slot: with what it would have had
    // if it had been tracked all along (one call), not a fresh burst of 3.
    clock.advance(SECOND);
    assert!(limiter.check_key(&x).is_ok());
    assert_eq!(
        limiter.check_key(&x).unwrap_err().retry_after(),
        Some(SECOND)
    );
    let stats = limiter.stats();
    assert_eq!((stats.keys, stats.overflow), (2, 4), "x is tracked now");
}

/// A layer that lets calls keyed by their `&'static str` wait up to `max_wait`.
fn waiting(
    limiter: &RateLimiter<ManualClock>,
    max_wait: Duration,
) -> impl tower::Service<
    &'static str,
    Response = &'static str,
    Error = edgeshed::BoxError,
    Future = impl std::future::Future<Output = Result<&'static str, edgeshed::BoxError>> + Unpin,
> + Clone {
    let echo = tower::service_fn(|key: &'static str| {
        std::future::ready(Ok::<_, std::convert::Infallible>(key))
    });
    RateLimitLayer::new(limiter.clone())
        .wait_at_most(max_wait)
        .unwrap()
        .read_call_with(|key: &&'static str| Call::default().with_key(*key))
        .layer(echo)
}

#[test]
fn a_refund_that_lowers_a_key_below_its_scheduled_recovery_still_lets_the_sweep_drop_it() {
    let rate = Rate::per_second(1)
        .unwrap()
        .with_burst(1)
        .unwrap()
        .with_max_keys(2)
        .unwrap();
    let (limiter, clock) = limiter(rate);
    let svc = waiting(&limiter, 5 * SECOND);
    // a reserves its turns at 0, 1 s and 2 s; b calls once (recovers at 1 s).
    assert!(matches!(
        poll_once(&mut svc.clone().oneshot("a")),
        Poll::Ready(Ok("a"))
    ));
    let mut second = svc.clone().oneshot("a");
    let mut third = svc.clone().oneshot("a");
    assert!(poll_once(&mut second).is_pending());
    assert!(poll_once(&mut third).is_pending());
    assert!(limiter.check_key(&Key::from("b")).is_ok());
    // At 1.5 s c takes b's recovered slot; a's second turn is taken, its
    // third (at 2 s) given back: a recovers at 2 s, not 3 s.
    clock.advance(1_500 * MS);
    assert!(limiter.check_key(&Key::from("c")).is_ok());
    assert!(matches!(poll_once(&mut second), Poll::Ready(Ok("a"))));
    drop(third);
    // At 2.2 s a has recovered: d takes its slot, and e still finds the
    // overflow allowance unused.
    clock.advance(700 * MS);
    let d = limiter.check_key(&Key::from("d"));
    assert!(d.is_ok(), "a recovered key was kept and d refused: {d:?}");
    assert!(limiter.check_key(&Key::from("e")).is_ok());
    assert_eq!(limiter.stats().overflow, 1, "only e used the overflow");
}

#[test]
fn a_refund_after_the_key_was_dropped_and_tracked_again_does_not_credit_the_new_entry() {
    let rate = Rate::per_second(1)
        .unwrap()
        .with_burst(1)
        .unwrap()
        .with_max_keys(1)
        .unwrap();
    let (limiter, clock) = limiter(rate);
    let svc = waiting(&limiter, 5 * SECOND);
    assert!(matches!(
        poll_once(&mut svc.clone().oneshot("a")),
        Poll::Ready(Ok("a"))
    ));
    let mut late = svc.clone().oneshot("a"); // its turn at 1 s, never taken
    assert!(poll_once(&mut late).is_pending());
    clock.advance(2 * SECOND);
    let a = Key::from("a");
    // a has recovered (at 2 s): b takes its slot; at 3 s b has recovered and
    // a is tracked again, with a new entry.
    assert!(limiter.check_key(&Key::from("b")).is_ok());
    clock.advance(SECOND);
    assert!(limiter.check_key(&a).is_ok());
    // The old reservation is given back: to the old entry, which is gone.
    drop(late);
    let again = limiter.check_key(&a);
    assert_eq!(
        again.map_err(|refused| refused.retry_after()),
        Err(Some(SECOND)),
        "the refund credited the key's new entry"
    );
}
