#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! The rules of each adaptive algorithm, one sample at a time.

use edgeshed::limit::adaptive::{
    Aimd, AnyLimit, Bounds, DrainSchedule, Gradient2, Limit, Outcome, Sample, Vegas, WindowLimit,
    WindowSummary,
};
use edgeshed::time::Instant;
use std::time::Duration;

fn at(ms: u64) -> Instant {
    Instant::from_origin(Duration::from_millis(ms))
}

fn ms(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

fn sample(start_ms: u64, rtt_ms: u64, in_flight: usize, dropped: bool) -> Sample {
    Sample::new(at(start_ms), ms(rtt_ms), in_flight, dropped)
}

fn bounds(initial: usize) -> Bounds {
    Bounds::new(initial, 1, 200).unwrap()
}

#[test]
fn aimd_backs_off_once_for_calls_admitted_before_the_backoff() {
    let mut aimd = Aimd::new(bounds(20), 0.9);
    // Ten calls admitted at t=0 all fail at t=5: one backoff, not ten.
    for _ in 0..10 {
        aimd.update(&sample(0, 5, 20, true));
    }
    assert_eq!(aimd.limit(), 18);
    // A call admitted after that backoff and dropped: the next one.
    assert_eq!(aimd.update(&sample(6, 1, 18, true)), 16);
}

#[test]
fn aimd_grows_by_one_per_round_trip_and_only_when_in_use() {
    let mut aimd = Aimd::new(bounds(10), 0.9);
    for _ in 0..10 {
        aimd.update(&sample(0, 5, 4, false)); // less than half in use
    }
    assert_eq!(aimd.limit(), 10);
    for _ in 0..11 {
        aimd.update(&sample(0, 5, 5, false)); // half in use: about a round trip
    }
    assert_eq!(aimd.limit(), 11);
}

/// Feeds a windowed limit calls of `rtt_ms` back to back from `now`, as
/// many at once as the limit admits (`in_flight` of them reported, at most
/// the limit), until `until_ms`; returns the time reached.
fn drive(limit: &mut impl Limit, now: u64, until_ms: u64, rtt_ms: u64, in_flight: usize) -> u64 {
    let mut now = now;
    while now < until_ms {
        let admitted = limit.limit();
        let reported = in_flight.min(admitted);
        for _ in 0..admitted {
            limit.update(&sample(now, rtt_ms, reported, false));
        }
        now += rtt_ms;
    }
    now
}

#[test]
fn a_warm_start_measures_the_first_calls_at_the_initial_limit_and_slow_start_goes_on_from_there() {
    let mut gradient2 = Gradient2::new(bounds(20));
    assert_eq!(gradient2.limit(), 20);
    assert!(!gradient2.draining());
    // The first finished call starts the warm start: the limit stays at
    // the initial 20 (a new isolate serves at once) while the calls
    // admitted after it seed the no-load RTT.
    assert_eq!(gradient2.update(&sample(0, 10, 20, false)), 20);
    assert!(gradient2.draining());
    let now = drain_through(&mut gradient2, 13, 10, 20);
    // A seed, not a drain: the drains' baseline is still empty.
    assert_eq!(gradient2.no_load(), Some(ms(10)));
    assert_eq!(gradient2.baseline().drains(), 0);
    // Slow start from the initial limit: doubling per window while the
    // latency shows room.
    let mut limits = vec![gradient2.limit()];
    let mut now = now;
    for _ in 0..3 {
        now = drive(&mut gradient2, now, now + 10, 10, usize::MAX);
        limits.push(gradient2.limit());
    }
    assert_eq!(limits[0], 20, "{limits:?}");
    assert!(limits.windows(2).all(|w| w[1] >= w[0]), "{limits:?}");
    assert!(*limits.last().unwrap() >= 80, "{limits:?}");
}

/// Feeds calls of `rtt_ms` one at a time from `now` until the drain in
/// progress ends, checking that it holds `held`; returns the time reached.
fn drain_through(limit: &mut Gradient2, now: u64, rtt_ms: u64, held: usize) -> u64 {
    let mut now = now;
    while limit.draining() {
        assert_eq!(limit.limit(), held, "a drain at {now} ms holds {held}");
        limit.update(&sample(now, rtt_ms, 1, false));
        now += rtt_ms;
        assert!(now < 10_000, "the drain never ended");
    }
    now
}

/// A Gradient2 past its first drain (no-load RTT 10 ms) and out of slow
/// start, at about `limit`; returns it and the time reached.
fn settled(limit: usize) -> (Gradient2, u64) {
    let mut gradient2 = Gradient2::new(bounds(1));
    gradient2.update(&sample(0, 10, 1, false));
    let mut now = drain_through(&mut gradient2, 13, 10, 1);
    // Room until the limit passes `limit`, then a window with a queue.
    while gradient2.limit() < limit {
        now = drive(&mut gradient2, now, now + 20, 10, usize::MAX);
    }
    now = drive(&mut gradient2, now, now + 30, 15, usize::MAX);
    (gradient2, now)
}

#[test]
fn a_window_with_drops_backs_off_once_and_never_moves_the_baseline() {
    let (mut gradient2, now) = settled(16);
    let before = gradient2.real_limit();
    let baseline = gradient2.baseline().no_load();
    // Twice a window of 503s, all admitted after the last decision and
    // before the first of them came back: one backoff.
    let len = gradient2.limit().max(8) * 2;
    for _ in 0..len {
        gradient2.update(&sample(now + 1, 5, len, true));
    }
    let after = gradient2.real_limit();
    assert!((after - before * 0.8).abs() < 1e-9, "{before} -> {after}");
    assert_eq!(gradient2.baseline().no_load(), baseline);
}

#[test]
fn a_sustained_queue_lowers_the_limit_but_not_the_baseline() {
    let (mut gradient2, now) = settled(32);
    let before = gradient2.limit();
    // Three times the no-load RTT, within one drain period: the limit only
    // falls (the published long average would have risen to 30 ms).
    let end = (now / 1_000 + 1) * 1_000 - 30;
    drive(&mut gradient2, now, end, 30, usize::MAX);
    assert!(
        gradient2.limit() <= before / 2,
        "{} from {before}",
        gradient2.limit()
    );
    assert_eq!(gradient2.no_load(), Some(ms(10)));
}

#[test]
fn under_used_windows_never_raise_the_limit() {
    let (mut gradient2, now) = settled(16);
    let before = gradient2.real_limit();
    // The no-load latency, but never more than 4 calls in flight.
    let end = (now / 1_000 + 1) * 1_000 - 10;
    drive(&mut gradient2, now, end, 10, 4);
    assert!(
        gradient2.real_limit() <= before,
        "{} from {before}",
        gradient2.real_limit()
    );
}

#[test]
fn limiters_with_different_clocks_drain_at_the_same_wall_clock_moments() {
    let mut one = Vegas::default();
    let mut other = Vegas::default();
    let mut drains = (Vec::new(), Vec::new());
    // The same wall-clock time line, instants 5 s apart.
    for step in 0..6_000u64 {
        let wall = Duration::from_millis(1_700_000_000_000 + step);
        for (limit, offset, seen) in [
            (&mut one, 0, &mut drains.0),
            (&mut other, 5_000, &mut drains.1),
        ] {
            let started =
                Sample::new(at(step + offset), ms(10), limit.limit(), false).with_wall_start(wall);
            limit.update(&started);
            if limit.draining() && seen.last() != Some(&(step / 1_000)) {
                seen.push(step / 1_000);
            }
        }
    }
    assert!(drains.0.len() >= 3, "{drains:?}");
    assert_eq!(drains.0, drains.1);
}

#[test]
fn the_drain_period_is_a_power_of_two_seconds_against_the_rtt() {
    assert_eq!(DrainSchedule::period(ms(20)), Duration::from_secs(8));
    assert_eq!(DrainSchedule::period(ms(200)), Duration::from_secs(64));
    assert_eq!(DrainSchedule::period(ms(10_000)), Duration::from_secs(128));
    assert_eq!(
        DrainSchedule::period(Duration::ZERO),
        Duration::from_secs(1)
    );
    assert_eq!(
        DrainSchedule::startup_period(ms(20)),
        Duration::from_secs(1)
    );
    let eight = Duration::from_secs(8);
    assert_eq!(DrainSchedule::epoch(Duration::from_millis(7_999), eight), 0);
    assert_eq!(DrainSchedule::epoch(Duration::from_secs(8), eight), 1);
}

fn served(rtt_ms: u64, count: usize, in_flight: usize) -> WindowSummary {
    let mut window = WindowSummary::default();
    (0..count).for_each(|_| window.record(Outcome::Served, ms(rtt_ms), in_flight));
    window
}

#[test]
fn a_fleet_limit_runs_over_merged_windows() {
    let mut fleet = AnyLimit::named("gradient2", Bounds::new(8, 1, 256).unwrap()).unwrap();
    fleet.on_drain(&served(20, 16, 4));
    // Room: slow start doubles.
    assert_eq!(fleet.on_window(&served(20, 16, 8), ms(20)), 16);
    // Sixteen isolates' reports of a window with a doubled latency: down.
    let mut window = WindowSummary::default();
    (0..16).for_each(|_| window.merge(&served(40, 2, 16)));
    assert!(fleet.on_window(&window, ms(40)) < 16);
    // A drop anywhere in the fleet: one backoff of 0.8.
    let before = fleet.limit() as f64;
    let mut dropped = served(40, 16, 16);
    dropped.record(Outcome::Dropped, ms(1), 16);
    let after = fleet.on_window(&dropped, ms(40)) as f64;
    assert!(after <= (before * 0.8).ceil() && after >= (before * 0.8).floor() - 1.0);
    // AIMD over windows: +1 per window in use, x backoff on drops.
    let mut aimd = AnyLimit::named("aimd", Bounds::new(8, 1, 256).unwrap()).unwrap();
    assert_eq!(aimd.on_window(&served(20, 8, 8), ms(20)), 9);
    assert_eq!(aimd.on_window(&dropped, ms(20)), 8);
}

#[test]
fn drops_inside_a_drain_lower_its_level_once_per_round_trip_and_the_limit_takes_the_cuts() {
    let (mut gradient2, mut now) = settled(32);
    // Served calls until a periodic drain begins (the first, at the
    // minimum, measures the baseline).
    while !(gradient2.draining() && gradient2.limit() >= 8) {
        now = drive(&mut gradient2, now, now + 10, 10, usize::MAX);
        assert!(now < 60_000, "no drain began");
    }
    let level = gradient2.limit();
    let before = gradient2.real_limit();
    // A drop one round trip into the drain: its level falls by 0.8.
    gradient2.update(&sample(now + 10, 10, level, true));
    let cut = gradient2.limit();
    assert_eq!(cut, (level as f64 * 0.8).floor() as usize, "from {level}");
    // Another within the same round trip: no second cut.
    gradient2.update(&sample(now + 12, 10, cut, true));
    assert_eq!(gradient2.limit(), cut);
    // One round trip later: the next.
    gradient2.update(&sample(now + 25, 10, cut, true));
    assert!(gradient2.limit() < cut, "{} from {cut}", gradient2.limit());
    assert!(
        gradient2.draining(),
        "the drain measures again at its new level"
    );
    // Served calls until it ends: the limit took both cuts.
    let mut at = now + 40;
    while gradient2.draining() {
        gradient2.update(&sample(at, 10, 1, false));
        at += 2;
        assert!(at < now + 10_000, "the drain never ended");
    }
    assert!(
        gradient2.real_limit() <= before * 0.64 + 1e-9,
        "{} from {before}",
        gradient2.real_limit()
    );
}
