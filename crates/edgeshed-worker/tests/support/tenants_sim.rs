//! The noisy-tenant bench (`benches/e2e/tenants.mjs`) on the manual clock:
//! two origins (limit 4, queue 4, queue timeout 50 ms, fair queueing by
//! key) behind the gateway's fan-out admission (origin a's permit, then
//! b's, both required), ten quiet tenants of Poisson arrivals at 4 req/s
//! each and a noisy one (keyed, or keyless) at a multiple of the 80 req/s
//! capacity. Every call stays 50–54 ms at its origin. What comes out: per
//! class the requests sent and answered 2xx, each refusal by origin and
//! reason, the 2xx latencies; origin a's mean calls in flight.
#![allow(dead_code)]

use super::kit::{self, Executor};
use edgeshed::admission::{Admission, AdmitError, Call, Criticality, QueueDiscipline};
use edgeshed::time::{Clock, ManualClock};
use edgeshed::Key;
use edgeshed_worker::fanout_admission::{FanOutAdmission, Planned};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;

pub const MS: Duration = Duration::from_millis(1);
/// Requests per second the two origins serve through the fan-out.
pub const CAPACITY: f64 = 80.0;
pub const QUIET_TENANTS: usize = 10;
/// Each quiet tenant's rate, as a share of the capacity.
pub const QUIET_SHARE: f64 = 0.05;

/// One load: the noisy tenant at `level`× the capacity, keyed or not.
#[derive(Clone, Copy, Debug)]
pub struct Load {
    pub level: f64,
    pub keyless: bool,
    pub seconds: u64,
    pub seed: u64,
}

/// What one class of streams got.
#[derive(Clone, Debug, Default)]
pub struct Figures {
    pub sent: u64,
    pub ok: u64,
    /// "origin reason" → count.
    pub refusals: BTreeMap<String, u64>,
    /// 2xx latencies, ms.
    pub latencies: Vec<u64>,
}

impl Figures {
    pub fn goodput(&self) -> f64 {
        self.ok as f64 / self.sent.max(1) as f64
    }

    pub fn p99(&self) -> u64 {
        let mut sorted = self.latencies.clone();
        sorted.sort_unstable();
        let at = (sorted.len() * 99).div_ceil(100).saturating_sub(1);
        sorted.get(at).copied().unwrap_or(0)
    }
}

/// The outcome of one load.
#[derive(Debug, Default)]
pub struct Outcome {
    pub quiet: Figures,
    pub noisy: Figures,
    /// Origin a's mean calls in flight ÷ its limit.
    pub busy: f64,
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in (0, 1].
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    }

    /// An exponential gap with mean `mean_ms`.
    fn gap(&mut self, mean_ms: f64) -> f64 {
        -self.unit().ln() * mean_ms
    }
}

fn reason(error: &AdmitError) -> &'static str {
    if let Some(overloaded) = error.overloaded() {
        return overloaded.reason().as_str();
    }
    if let Some(limited) = error.rate_limited() {
        return limited.reason().as_str();
    }
    "other"
}

const NAMES: [&str; 2] = ["a", "b"];

/// Runs `load` for its seconds (plus the time to drain).
pub fn run(load: Load) -> Outcome {
    let clock = ManualClock::new();
    let timeout = Duration::from_millis(50);
    let origins: Vec<Admission<ManualClock>> = (0..2)
        .map(|_| kit::limit(&clock, 4, 4, timeout, QueueDiscipline::Fifo))
        .collect();
    let outcome = Rc::new(RefCell::new(Outcome::default()));
    let mut rng = Rng(load.seed.max(1));
    let mut executor = Executor::default();
    // (rate per ms, key, quiet) per stream, and its next arrival (ms).
    let mut streams: Vec<(f64, Option<String>, bool, f64)> = (0..QUIET_TENANTS)
        .map(|i| {
            (
                QUIET_SHARE * CAPACITY / 1000.0,
                Some(format!("q{i}")),
                true,
                0.0,
            )
        })
        .collect();
    if load.level > 0.0 {
        let key = (!load.keyless).then(|| "noisy".to_string());
        streams.push((load.level * CAPACITY / 1000.0, key, false, 0.0));
    }
    for stream in &mut streams {
        stream.3 = rng.gap(1.0 / stream.0);
    }
    let end = load.seconds * 1000;
    let mut busy_sum = 0usize;
    for tick in 0..end + 500 {
        if tick < end {
            for stream in &mut streams {
                while stream.3 < (tick + 1) as f64 {
                    stream.3 += rng.gap(1.0 / stream.0);
                    let ticks = [50 + rng.next() % 5, 50 + rng.next() % 5];
                    spawn(
                        &mut executor,
                        &clock,
                        &origins,
                        (stream.1.clone(), stream.2, ticks),
                        &outcome,
                    );
                }
            }
        }
        executor.run();
        if tick < end {
            busy_sum += origins[0].stats().in_flight;
        }
        clock.advance(MS);
    }
    executor.run();
    let mut outcome = Rc::try_unwrap(outcome).unwrap().into_inner();
    outcome.busy = busy_sum as f64 / (end as f64 * 4.0);
    outcome
}

fn spawn(
    executor: &mut Executor,
    clock: &ManualClock,
    origins: &[Admission<ManualClock>],
    (key, quiet, ticks): (Option<String>, bool, [u64; 2]),
    outcome: &Rc<RefCell<Outcome>>,
) {
    let call = Call::new(Criticality::Default).with_optional_key(key.map(Key::from));
    let planned: Vec<_> = (0..2)
        .map(|origin| Planned {
            position: origin,
            origin,
            required: true,
            acquire: origins[origin].admit_call(call.clone()),
        })
        .collect();
    let (clock, outcome) = (clock.clone(), Rc::clone(outcome));
    let started = clock.now();
    {
        let mut out = outcome.borrow_mut();
        let figures = if quiet {
            &mut out.quiet
        } else {
            &mut out.noisy
        };
        figures.sent += 1;
    }
    executor.spawn(async move {
        let admission = FanOutAdmission::new(planned);
        let admission = &admission;
        let refused: Rc<RefCell<Option<String>>> = Rc::default();
        let calls = (0..2).map(|origin| {
            let (clock, refused) = (clock.clone(), Rc::clone(&refused));
            let call = async move {
                match admission.turn(origin).unwrap().await {
                    Ok(held) => {
                        clock
                            .sleep_until(clock.now() + MS * ticks[origin] as u32)
                            .await;
                        drop(held);
                        true
                    }
                    Err(error) => {
                        let what = format!("{} {}", NAMES[origin], reason(&error));
                        refused.borrow_mut().get_or_insert(what);
                        false
                    }
                }
            };
            Some(Box::pin(call) as Pin<Box<dyn Future<Output = bool> + '_>>)
        });
        let ok = kit::until_decided(calls.collect(), vec![true, true]).await;
        let mut out = outcome.borrow_mut();
        let figures = if quiet {
            &mut out.quiet
        } else {
            &mut out.noisy
        };
        if ok {
            figures.ok += 1;
            let took = clock.now().saturating_duration_since(started);
            figures.latencies.push(took.as_millis() as u64);
        } else {
            let what = refused.borrow_mut().take().unwrap_or_else(|| "?".into());
            *figures.refusals.entry(what).or_default() += 1;
        }
    });
}
