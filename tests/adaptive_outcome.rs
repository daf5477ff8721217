#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! The one outcome contract: every finished call is served, dropped or
//! ignored, classified once by the core; and the window summaries a fleet
//! limit merges.

use edgeshed::error::{BoxError, Expired, Overloaded};
use edgeshed::limit::adaptive::{
    Aimd, Bounds, Classify, Controller, DefaultClassify, Ending, Outcome, WindowSummary,
};
use edgeshed::semaphore::Semaphore;
use edgeshed::time::ManualClock;
use std::time::Duration;

#[test]
fn every_ending_has_one_outcome() {
    let table = [
        (Ending::Status(200), Outcome::Served),
        (Ending::Status(404), Outcome::Served),
        (Ending::Status(500), Outcome::Served),
        (Ending::Status(504), Outcome::Served),
        (Ending::Status(503), Outcome::Dropped),
        (Ending::Status(429), Outcome::Dropped),
        (Ending::Completed, Outcome::Served),
        (Ending::Failed, Outcome::Dropped),
        (Ending::TimedOut, Outcome::Dropped),
        (Ending::Overloaded, Outcome::Dropped),
        (Ending::DeadlinePassed, Outcome::Ignored),
        (Ending::Aborted, Outcome::Ignored),
    ];
    for (ending, outcome) in table {
        assert_eq!(ending.outcome(), outcome, "{ending:?}");
        assert_eq!(Outcome::from(ending), outcome);
    }
}

#[test]
fn the_tower_default_ignores_the_callers_deadline_and_drops_failures() {
    let classify = DefaultClassify;
    let ok: Result<&u32, &BoxError> = Ok(&1);
    assert_eq!(classify.outcome(ok), Outcome::Served);
    let expired: BoxError = Box::new(Expired::new());
    assert_eq!(classify.outcome(Err::<&u32, _>(&expired)), Outcome::Ignored);
    let overloaded: BoxError = Box::new(Overloaded::new());
    assert_eq!(
        classify.outcome(Err::<&u32, _>(&overloaded)),
        Outcome::Dropped
    );
    let failed: BoxError = "connection reset".into();
    assert_eq!(classify.outcome(Err::<&u32, _>(&failed)), Outcome::Dropped);
    // The error types themselves, not boxed.
    assert_eq!(
        classify.outcome(Err::<&u32, _>(&Expired::new())),
        Outcome::Ignored
    );
    assert_eq!(
        classify.outcome(Err::<&u32, _>(&std::io::Error::other("reset"))),
        Outcome::Dropped
    );
}

#[test]
fn an_ignored_call_is_no_sample() {
    let clock = ManualClock::new();
    let semaphore = Semaphore::new(1);
    let controller = Controller::new(Aimd::new(Bounds::new(10, 1, 20).unwrap(), 0.5), semaphore);
    let started = controller.start(&clock);
    clock.advance(Duration::from_millis(5));
    assert_eq!(controller.finish(started, &clock, Outcome::Ignored), 10);
    let started = controller.start(&clock);
    clock.advance(Duration::from_millis(5));
    assert_eq!(controller.finish(started, &clock, Outcome::Dropped), 5);
}

#[test]
fn summaries_count_served_and_dropped_calls_and_only_served_rtts() {
    let ms = Duration::from_millis;
    let mut window = WindowSummary::default();
    window.record(Outcome::Served, ms(10), 3);
    window.record(Outcome::Served, ms(30), 5);
    window.record(Outcome::Dropped, ms(0), 9);
    window.record(Outcome::Ignored, ms(500), 12);
    assert_eq!(
        (window.served(), window.dropped(), window.count()),
        (2, 1, 3)
    );
    assert_eq!(window.mean_rtt(), Some(ms(20)));
    assert_eq!(
        (window.min_rtt(), window.max_rtt()),
        (Some(ms(10)), Some(ms(30)))
    );
    assert_eq!(window.max_in_flight(), 9);
    // sqrt(((10-20)^2 + (30-20)^2) / 1) / sqrt(2) / 20 = 0.5
    assert!((window.relative_error().unwrap() - 0.5).abs() < 1e-9);
    // Sent as parts and rebuilt: the same summary.
    let rebuilt = WindowSummary::from_parts(
        window.served(),
        window.dropped(),
        window.rtt_total(),
        window.rtt_squares(),
        window.min_rtt(),
        window.max_rtt(),
        window.max_in_flight(),
    )
    .unwrap();
    assert_eq!(rebuilt, window);
    // Merged with another isolate's: the union of both.
    let mut other = WindowSummary::default();
    other.record(Outcome::Served, ms(50), 2);
    let mut merged = window;
    merged.merge(&other);
    assert_eq!((merged.served(), merged.dropped()), (3, 1));
    assert_eq!(merged.mean_rtt(), Some(ms(30)));
    assert_eq!(merged.max_rtt(), Some(ms(50)));
    assert_eq!(merged.with_max_in_flight(20).max_in_flight(), 20);
}

#[test]
fn summaries_that_no_calls_can_have_are_refused_by_name() {
    let ms = Duration::from_millis;
    let refused = |served, total, squares, min, max| {
        WindowSummary::from_parts(served, 0, total, squares, min, max, 1)
            .unwrap_err()
            .to_string()
    };
    assert!(refused(0, ms(5), 0.0, None, None).contains("served = 0"));
    assert!(refused(2, ms(20), 0.0, None, None).contains("min_rtt and max_rtt"));
    assert!(refused(2, ms(20), 0.0, Some(ms(20)), Some(ms(10))).contains("exceeds"));
    assert!(refused(2, ms(100), 0.0, Some(ms(10)), Some(ms(20))).contains("rtt_total"));
    assert!(refused(2, ms(20), f64::NAN, Some(ms(10)), Some(ms(10))).contains("rtt_squares"));
    assert!(WindowSummary::from_parts(0, 4, Duration::ZERO, 0.0, None, None, 3).is_ok());
}
