//! edgeshed's GCRA (`RateLimiter::check_key`) against governor's keyed
//! limiter (`check_key`, DashMap store), the same keys in the same order,
//! every call allowed (the common case), with three clocks: the standard
//! library's `Instant` on both sides, a clock that stands still on both
//! sides (the table and the arithmetic alone), and governor's default
//! (quanta) as it ships.

use super::harness::{timed, Case, Group};
use edgeshed::rate_limit::{Rate, RateLimiter};
use edgeshed::time::{Clock, Instant};
use governor::clock::{FakeRelativeClock, MonotonicClock};
use governor::Quota;
use std::hint::black_box;
use std::num::NonZeroU32;
use std::time::Duration;

/// A `Clock` on the standard library's monotonic clock (as governor's
/// `MonotonicClock`); its sleeps are never used here.
#[derive(Clone)]
struct StdClock(std::time::Instant);

impl Clock for StdClock {
    type Sleep = std::future::Pending<()>;
    fn now(&self) -> Instant {
        Instant::from_origin(self.0.elapsed())
    }
    fn sleep_until(&self, _: Instant) -> Self::Sleep {
        std::future::pending()
    }
}

/// A `Clock` that stands still (as governor's `FakeRelativeClock`).
#[derive(Clone)]
struct StillClock;

impl Clock for StillClock {
    type Sleep = std::future::Pending<()>;
    fn now(&self) -> Instant {
        Instant::from_origin(Duration::from_secs(1))
    }
    fn sleep_until(&self, _: Instant) -> Self::Sleep {
        std::future::pending()
    }
}

/// 10^9 per second with a burst of 10^6: with a still clock, 10^6 calls
/// per key are allowed, more than any round makes.
const RATE: u32 = 1_000_000_000;
const BURST: u32 = 1_000_000;

fn ours<C: Clock>(clock: C, keys: u64) -> RateLimiter<C, u64> {
    let rate = Rate::per_second(u64::from(RATE))
        .unwrap()
        .with_burst(u64::from(BURST))
        .unwrap();
    RateLimiter::new(rate.with_max_keys(keys as usize).unwrap(), clock)
}

fn quota() -> Quota {
    Quota::per_second(NonZeroU32::new(RATE).unwrap()).allow_burst(NonZeroU32::new(BURST).unwrap())
}

/// `n` checks over `keys` keys in turn; returns the allowed ones.
fn run(n: u64, keys: u64, mut check: impl FnMut(&u64) -> bool) -> u64 {
    (0..n).filter(|i| check(black_box(&(i % keys)))).count() as u64
}

pub(crate) fn gcra(n: u64, keys: u64) -> Group {
    let cases = vec![
        Case::new("edgeshed GCRA: check_key, std clock", move |rt, n| {
            let limiter = ours(StdClock(std::time::Instant::now()), keys);
            timed(
                rt,
                async { run(n, keys, |key| limiter.check_key(key).is_ok()) },
                n,
            )
        }),
        Case::new("governor: check_key, MonotonicClock", move |rt, n| {
            let limiter = governor::RateLimiter::dashmap_with_clock(quota(), MonotonicClock);
            timed(
                rt,
                async { run(n, keys, |key| limiter.check_key(key).is_ok()) },
                n,
            )
        }),
        Case::new("edgeshed GCRA: check_key, still clock", move |rt, n| {
            let limiter = ours(StillClock, keys);
            timed(
                rt,
                async { run(n, keys, |key| limiter.check_key(key).is_ok()) },
                n,
            )
        }),
        Case::new("governor: check_key, FakeRelativeClock", move |rt, n| {
            let limiter =
                governor::RateLimiter::dashmap_with_clock(quota(), FakeRelativeClock::default());
            timed(
                rt,
                async { run(n, keys, |key| limiter.check_key(key).is_ok()) },
                n,
            )
        }),
        Case::new(
            "governor: check_key, default clock (quanta)",
            move |rt, n| {
                let limiter = governor::RateLimiter::dashmap(quota());
                timed(
                    rt,
                    async { run(n, keys, |key| limiter.check_key(key).is_ok()) },
                    n,
                )
            },
        ),
    ];
    Group {
        title: if keys == 1_000 {
            "6a. GCRA vs governor check_key: 1,000 u64 keys in turn, all allowed"
        } else {
            "6b. GCRA vs governor check_key: 10,000 u64 keys in turn, all allowed"
        },
        ops: n,
        arg: n,
        cases,
        ratios: vec![(0, 1), (2, 3), (0, 4)],
        baseline: None,
        versus: "edgeshed/governor",
    }
}
