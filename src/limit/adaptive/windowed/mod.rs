//! The windowed delay-based limits: a windowing rule, a no-load baseline
//! and a [`WindowRule`] that turns each window into a new limit.

mod active_drain;
mod baseline;
mod dither;
mod drain;
mod finished_call;
mod rule;
mod state;

pub use baseline::Baseline;
pub use drain::DrainSchedule;
pub(crate) use rule::integrate;
pub use rule::WindowRule;

use super::{Bounds, Limit, Sample, WindowLimit, WindowSummary};
use core::time::Duration;
use state::State;

/// A delay-based limit after Netflix's `WindowedLimit` decorator: samples
/// are gathered into windows, and a [`WindowRule`] moves the limit once per
/// window. What the decorator adds to a rule, shared by [`Gradient2`](super::Gradient2)
/// and [`Vegas`](super::Vegas) (Netflix's decorator closes windows by time
/// and hands the rule a window's mean RTT; the changes below are what
/// N independent limiters in front of one origin need, each measured in
/// `tests/adaptive_convergence.rs` and `tests/adaptive_episodes.rs`):
///
/// * **Windows that end when they can tell.** A window holds at least
///   `max(limit, 8)` finished calls and grows, up to `max(limit, 48)`,
///   while its mean RTT lies within four standard errors of the rule's
///   threshold: with service times that vary, a window of eight calls
///   cannot tell a 5 % queue from chance. After a decrease, calls admitted
///   under the higher limit count in no window (TCP reduces at most once
///   per window, RFC 6582).
/// * **One outcome contract.** Only served calls inform the RTT. A window
///   with drops multiplies the limit by 0.8 (once, however many drops) and
///   never moves the baseline.
/// * **A warm start.** The first finished call starts a *seed* at the
///   initial limit: the calls admitted after it (at least 8, until their
///   mean's relative error is 5 %) give a provisional no-load RTT, and the
///   limit serves at its initial value meanwhile (a new isolate is not
///   held at one call). The first synchronised drain, at most 4 s later,
///   holds the minimum so the whole fleet empties the origin's queue and
///   measures it; if the seed was over 1.5 × that, the initial limits were
///   above the capacity, and slow start begins again from the minimum.
/// * **A no-load RTT from synchronised drains** ([`Baseline`],
///   [`DrainSchedule`]): every limiter drains at the same wall-clock
///   moments, to 0.85 of what it had in flight divided by the last RTT
///   ratio, so that the fleet keeps about 0.85 of the origin's capacity in
///   flight, the queue empties, and most of the throughput stays. A drain
///   sees what happens meanwhile: a drop cuts its level by 0.8 (once per
///   round trip) and it measures again; calls over 1.5 × the no-load RTT
///   (by two standard errors) mean it did not drain (the capacity fell):
///   it ends at once, forgotten, with a cut; the limit takes every cut its
///   drain took; a drain lasts at most 5 s, and one after a window with
///   drops starts at most at 0.8 of the limit.
/// * **Slow start**: from the initial limit after the warm start (from the
///   minimum when the warm start ran under a queue), doubling per window
///   while the rule sees room; after a run of drops it does the same up to
///   the level before them (TCP's ssthresh, RFC 5681 §3.1).
/// * **No upward path from under-used windows**: a window in which the
///   limit was never reached never raises it (stricter than the published
///   "half the limit in use", which let an isolate's limit climb to twice
///   what it used while the others shrank).
/// * **A real-valued limit, dithered.** The limit applied is `floor(limit +
///   d)` with `d` a low-discrepancy sequence in [0, 1): its mean is the
///   real limit. Small per-isolate shares (8 isolates, 8 slots) are then
///   fractions of a call rather than whole calls that all step at once.
#[derive(Clone, Debug)]
pub struct Windowed<R> {
    rule: R,
    state: State,
}

impl<R: WindowRule> Windowed<R> {
    /// `rule` within `bounds`, starting at the initial limit.
    pub fn with_rule(rule: R, bounds: Bounds) -> Self {
        Self {
            rule,
            state: State::new(bounds),
        }
    }

    /// The rule.
    pub fn rule(&self) -> &R {
        &self.rule
    }

    /// The rule, to tune it.
    pub(crate) fn rule_mut(&mut self) -> &mut R {
        &mut self.rule
    }

    /// The no-load RTT estimate of the drains.
    pub fn baseline(&self) -> &Baseline {
        &self.state.baseline
    }

    /// The no-load RTT the limit judges by: the drains' baseline, else (after
    /// the warm start, before the first drain) the mean RTT of the first
    /// calls at the initial limit.
    pub fn no_load(&self) -> Option<Duration> {
        self.state
            .no_load()
            .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
    }

    /// The real-valued limit the applied one dithers around.
    pub fn real_limit(&self) -> f64 {
        self.state.limit
    }

    /// Whether a drain holds the limit low now.
    pub fn draining(&self) -> bool {
        self.state.drains.active()
    }
}

impl<R: WindowRule> Limit for Windowed<R> {
    fn bounds(&self) -> Bounds {
        self.state.bounds
    }

    fn limit(&self) -> usize {
        self.state.applied
    }

    fn update(&mut self, sample: &Sample) -> usize {
        self.state.update(sample, &self.rule)
    }
}

impl<R: WindowRule> WindowLimit for Windowed<R> {
    fn on_window(&mut self, window: &WindowSummary, span: Duration) -> usize {
        self.state.on_window(window, span, &self.rule)
    }

    fn on_drain(&mut self, window: &WindowSummary) -> usize {
        self.state.on_drain(window)
    }
}
