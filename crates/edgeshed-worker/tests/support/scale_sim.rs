//! A fleet of 10 to 1,000 isolates sharing one origin's budget, simulated on
//! a manual clock with the real `LeaseTable` (behind the object shell of
//! `scale_object.rs`) and real `LeaseHolder`s, driven the way the worker
//! drives them (`src/handler/budget/`): an isolate kicks its holder on every
//! arrival, answer, finished call and timer (`next_poll_at`); a request its
//! lease cannot cover waits up to the holder's patience (past it, while a
//! call is under way, up to the origin's `timeoutMs`) and is refused at once
//! when its holder has backed off. Events run in time order (a heap), so
//! idle isolates cost nothing. Isolates are evicted and replaced all the
//! time; an evicted isolate's calls run on at the origin until they end.
//!
//! `#[path = "support/scale_sim.rs"] mod sim;`
#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

#[path = "scale_events.rs"]
mod events;
#[path = "scale_ideal.rs"]
mod ideal;
#[path = "scale_kit.rs"]
mod kit;
#[path = "scale_object.rs"]
mod object;

use events::{Ev, Item};
pub use ideal::ideal_goodput;
pub use kit::{Report, Rng, Scenario};
use object::Object;

use edgeshed_worker::budget::{HolderConfig, LeaseHolder, Unavailable};

/// A request waiting for a permit: when it came, when its patience ends,
/// when its own limit (the origin's `timeoutMs`) passes.
#[derive(Debug, Clone, Copy)]
struct Request {
    arrived: u64,
    /// How long its call holds the origin once admitted.
    service: u64,
    give_up: u64,
    own: u64,
}

/// One isolate (one generation of a slot).
struct Isolate {
    gen: u64,
    id: String,
    holder: LeaseHolder,
    waiting: VecDeque<Request>,
    /// The number of the last lease call and watch sent, and whether each
    /// is still under way.
    lease_no: u64,
    lease_out: bool,
    watch_no: u64,
    watch_out: bool,
    timer_at: Option<u64>,
}

/// The simulation.
pub struct Sim {
    pub sc: Scenario,
    pub now: u64,
    rng: Rng,
    /// The restarts', slow episodes' and evictions' own generator: the same
    /// schedule whatever the budget code does.
    schedule: Rng,
    /// The arrivals' own generator (when, where, how long the call): the
    /// same traffic whatever the budget code does, so two versions of it
    /// compare on the same requests.
    traffic: Rng,
    cfg: HolderConfig,
    isolates: Vec<Isolate>,
    pub object: Object,
    heap: BinaryHeap<Reverse<Item>>,
    seq: u64,
    /// Calls at the origin now (evicted isolates' included).
    pub origin: u32,
    slow_until: u64,
    start: u64,
    pub report: Report,
    /// Permit-ms the origin was busy in the measured window.
    busy_ms: u64,
    /// The fraction of a millisecond the arrivals are behind.
    arrival_debt: f64,
    /// When each evicted isolate (holder id) went.
    evicted: std::collections::BTreeMap<String, u64>,
}

impl Sim {
    pub fn new(sc: Scenario) -> Self {
        let cfg =
            HolderConfig::new(sc.local, sc.ttl, Unavailable::Shed).calls_last(sc.timeout, sc.ttl);
        // started one TTL after the object, past its learning mode
        let start = sc.ttl;
        let mut sim = Self {
            rng: Rng::new(sc.seed),
            schedule: Rng::new(sc.seed ^ 0x0bad_5eed),
            traffic: Rng::new(sc.seed ^ 0x7aff_1c00),
            cfg,
            isolates: Vec::new(),
            object: Object::new(sc.budget, sc.ttl, 0),
            heap: BinaryHeap::new(),
            seq: 0,
            origin: 0,
            slow_until: 0,
            now: start,
            start,
            report: Report::default(),
            busy_ms: 0,
            arrival_debt: 0.0,
            evicted: std::collections::BTreeMap::new(),
            sc,
        };
        for slot in 0..sim.sc.isolates {
            let isolate = sim.isolate(slot, 0);
            sim.isolates.push(isolate);
            let life = sim.schedule.exp(sim.sc.lifetime);
            sim.at(start + life, Ev::Evict { slot });
        }
        let first = sim.gap();
        sim.at(start + first, Ev::Arrival);
        if let Some(every) = sim.sc.restart_every {
            let at = start + sim.schedule.exp(every);
            sim.at(at, Ev::Restart);
        }
        if let Some((every, ..)) = sim.sc.slow {
            let at = start + sim.schedule.exp(every);
            sim.at(at, Ev::Slow);
        }
        sim
    }

    fn isolate(&self, slot: usize, gen: u64) -> Isolate {
        Isolate {
            gen,
            id: format!("{slot}.{gen}"),
            holder: LeaseHolder::new(self.cfg),
            waiting: VecDeque::new(),
            lease_no: 0,
            lease_out: false,
            watch_no: 0,
            watch_out: false,
            timer_at: None,
        }
    }

    fn at(&mut self, at: u64, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse(Item {
            at,
            seq: self.seq,
            ev,
        }));
    }

    fn measured(&self, t: u64) -> bool {
        t >= self.start + self.sc.warmup
    }

    /// The time between two arrivals (Poisson at `load` × capacity).
    fn gap(&mut self) -> u64 {
        let rate_per_ms = self.sc.load * self.sc.capacity_rps() / 1_000.0;
        // exponential, in µs resolution folded to ms by accumulation
        let gap = -(1.0 - self.traffic.unit()).ln() / rate_per_ms;
        self.arrival_debt += gap;
        let whole = self.arrival_debt.floor();
        self.arrival_debt -= whole;
        whole as u64
    }

    /// One leg of an object call (half a round trip) at `now`.
    fn leg(&mut self) -> u64 {
        let (lo, hi) = if self.now < self.slow_until {
            self.sc.slow.map_or(self.sc.latency, |(_, _, range)| range)
        } else {
            self.sc.latency
        };
        self.rng.range(lo, hi).div_ceil(2)
    }

    /// How long a call may take beyond what the object may keep it (the
    /// worker's `call_timeout_ms`).
    fn call_timeout(&self) -> u64 {
        (self.sc.ttl / 2).max(50)
    }

    /// Runs the scenario to its end and returns the report.
    pub fn run(mut self) -> Report {
        let end = self.start + self.sc.duration;
        while let Some(Reverse(item)) = self.heap.pop() {
            if item.at > end {
                break;
            }
            if item.at / 1_000 != self.now / 1_000 && self.measured(self.now) {
                self.probe();
            }
            self.now = item.at;
            self.handle(item.ev);
        }
        let mut report = self.report;
        report.isolates = self.sc.isolates;
        report.load = self.sc.load;
        report.budget = self.sc.budget;
        report.seconds = (self.sc.duration - self.sc.warmup) as f64 / 1_000.0;
        report.utilisation =
            self.busy_ms as f64 / (f64::from(self.sc.budget) * report.seconds * 1_000.0);
        let from = ((self.start + self.sc.warmup) / 1_000) as usize;
        report.peak_calls_per_s = self
            .object
            .per_second
            .iter()
            .skip(from)
            .copied()
            .max()
            .unwrap_or(0);
        report.object_calls = self
            .object
            .per_second
            .iter()
            .skip(from)
            .map(|&n| u64::from(n))
            .sum();
        report.restarts = self.object.restarts;
        report.crossed_watches = self.object.stale_watches;
        let samples = report.probes.max(1) as f64;
        report.dead_leased /= samples;
        report.idle_held /= samples;
        report.stranded /= samples;
        report.idle_lease /= samples;
        report.spare /= samples;
        report.in_flight /= samples;
        report.free /= samples;
        report.waits.sort_unstable();
        report
    }
}

#[path = "scale_probe.rs"]
mod probe;
#[path = "scale_requests.rs"]
mod requests;
#[path = "scale_step.rs"]
mod step;
