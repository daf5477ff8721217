//! One drain in progress: which calls measure the no-load RTT, when it has
//! measured enough, and what drops and a queue that does not drain do to
//! it. Times are seconds on the clock of the samples.

use super::finished_call::FinishedCall;
use crate::limit::adaptive::WindowSummary;

/// Served calls a drain averages at least (fewer if its time runs out)...
const DRAIN_SAMPLES: u64 = 8;
/// ...and more, up to this many, while the relative standard error of
/// their mean exceeds `DRAIN_ERROR`. Limiters that each measured the origin
/// a few per cent low or high would disagree on its queue by as much, and
/// their shares drift apart; 1 % keeps the shares of eight limiters within
/// a factor of three of each other.
const MAX_DRAIN_SAMPLES: u64 = 192;
const DRAIN_ERROR: f64 = 0.01;
/// The first drain (the warm start) closes at this error: it holds the
/// initial limit rather than draining, and only seeds the baseline until
/// the first synchronised drain measures it (the baseline keeps the lowest
/// of its drains, so a seed measured under a queue is replaced at once).
const STARTUP_ERROR: f64 = 0.05;
/// The most round trips a drain measures for: its cost, where a small
/// limit collects its calls slowly.
const MAX_DRAIN_ROUNDS: u64 = 24;
/// A drain lasts at most this long on the clock, whatever its plan and its
/// restarts (at small limits and long round trips its plan alone could
/// hold a stale level for many seconds).
const MAX_DRAIN_SECS: f64 = 5.0;
/// The factor a drop inside a drain applies to its level (once per round
/// trip), and the limit takes once per such cut when the drain ends.
pub(super) const DRAIN_DROP_BACKOFF: f64 = 0.8;
/// A drain whose calls take longer than this many times the no-load RTT
/// did not drain (the origin's capacity fell, or others fill it): it ends
/// at once, records nothing and cuts.
const UNDRAINED: f64 = 1.5;

/// A drain in progress.
#[derive(Clone, Debug)]
pub(crate) struct Active {
    pub(super) startup: bool,
    pub(super) limit: f64,
    /// When the drain began: calls started before are the old load.
    began: f64,
    measure_from: f64,
    /// Set once enough calls were measured: calls started before it still
    /// count (the longest ones finish last; leaving them out would bias the
    /// mean low), calls started later do not.
    closing: Option<f64>,
    until: f64,
    pub(super) window: WindowSummary,
    /// Its level was cut this many times (drops, or a queue it did not drain).
    cuts: u32,
    /// When it was last cut.
    cut_at: f64,
    /// Its calls showed a queue: its mean is not a no-load RTT.
    pub(super) undrained: bool,
}

/// What a call meant for a drain in progress.
pub(crate) enum Judged {
    /// It goes on.
    Draining,
    /// It is over, cut `cuts` times.
    Done { cuts: u32 },
}

impl Active {
    /// A drain at `limit` from `now`, when the calls queued before need
    /// `flush` seconds (the current RTT).
    pub(super) fn new(now: f64, flush: f64, limit: f64, startup: bool) -> Self {
        // FIFO at the origin: what was queued when the drain began is done
        // about one current RTT later (a quarter more for jitter);
        // `measure_from` moves later while calls of the old load still
        // finish (`restart_measuring`).
        let flush = flush * 1.25;
        let measure_from = now + flush;
        let rounds = (MAX_DRAIN_SAMPLES as f64 / limit.max(1.0)).ceil() + 2.0;
        let until = measure_from + flush * rounds.min(MAX_DRAIN_ROUNDS as f64);
        Self {
            startup,
            limit,
            began: now,
            measure_from,
            closing: None,
            until: until.min(now + MAX_DRAIN_SECS),
            window: WindowSummary::default(),
            cuts: 0,
            cut_at: now,
            undrained: false,
        }
    }

    /// Measures from `now` on, as long as before (but a drain lasts at most
    /// four times its planned length, and `MAX_DRAIN_SECS`).
    fn restart_measuring(&mut self, now: f64) {
        let span = self.until - self.measure_from;
        let latest =
            (self.began + (self.until - self.began) * 4.0).min(self.began + MAX_DRAIN_SECS);
        self.measure_from = now;
        self.until = (now + span).min(latest);
        self.window = WindowSummary::default();
        self.closing = None;
    }

    /// Takes `call` into account (`flush`: the current RTT; `min`: the
    /// lowest level a cut may reach; `no_load`: the baseline, if any).
    pub(super) fn observe(
        &mut self,
        call: &FinishedCall,
        flush: f64,
        min: f64,
        no_load: Option<f64>,
    ) -> Judged {
        let now = call.completed;
        let started = call.started;
        if started < self.began && now > self.measure_from {
            // A call of the old load finished only now: the queue it
            // waited in was still there for the calls started until
            // now (FIFO), so they do not measure the no-load RTT.
            self.restart_measuring(now);
        }
        if call.sample.dropped() && started >= self.began && !self.startup {
            // A drop while draining: the origin has less room than the
            // drain's level. Lower it, once per round trip, and measure
            // again at the new level.
            if now - self.cut_at >= flush {
                self.cut(now, min);
            }
            return self.judge(now);
        }
        let before_close = self.closing.is_none_or(|closing| started < closing);
        if !call.sample.dropped() && started >= self.measure_from && before_close {
            self.window.add(&call.sample);
        }
        if self.closing.is_none() {
            if !self.startup && self.shows_a_queue(no_load) {
                // It did not drain: done, cut, and its mean forgotten.
                self.undrained = true;
                self.cuts += 1;
                return Judged::Done { cuts: self.cuts };
            }
            let goal = if self.startup {
                STARTUP_ERROR
            } else {
                DRAIN_ERROR
            };
            let noisy = self.window.relative_error().is_none_or(|e| e > goal);
            let more = self.window.served() < DRAIN_SAMPLES
                || (noisy && self.window.served() < MAX_DRAIN_SAMPLES);
            if !more {
                self.closing = Some(now);
            }
        }
        self.judge(now)
    }

    /// Whether the calls measured so far (at least `DRAIN_SAMPLES`) take
    /// longer than `UNDRAINED` × the no-load RTT by more than two standard
    /// errors of their mean: the queue is still there.
    fn shows_a_queue(&self, no_load: Option<f64>) -> bool {
        let window = &self.window;
        let (Some(no_load), Some(mean)) = (no_load, window.mean_secs()) else {
            return false;
        };
        let error = window.relative_error().unwrap_or(1.0);
        window.served() >= DRAIN_SAMPLES && mean * (1.0 - 2.0 * error) > UNDRAINED * no_load
    }

    /// Lowers the level by the drop backoff (not below `min`) and measures
    /// again from `now`.
    fn cut(&mut self, now: f64, min: f64) {
        self.limit = (self.limit * DRAIN_DROP_BACKOFF).max(min);
        self.cuts += 1;
        self.cut_at = now;
        self.restart_measuring(now);
    }

    /// Done once the calls started before closing had the time of the
    /// longest measured one to finish, or the drain ran out of time.
    fn judge(&self, now: f64) -> Judged {
        let finished = self
            .closing
            .is_some_and(|closing| now >= closing + self.window.max_secs());
        if finished || now >= self.until {
            Judged::Done { cuts: self.cuts }
        } else {
            Judged::Draining
        }
    }
}
