#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
#![allow(dead_code)]
//! A simulated origin in front of N independent limiters, in 1 ms steps of
//! simulated time: no real time, fully deterministic.
//!
//! Each client is one isolate's limiter: a [`Limit`] algorithm of its own,
//! admitting a call while fewer than its current limit are in flight and
//! shedding the rest at once, fed one [`Sample`] per finished call. The
//! clients know nothing of each other. The origin serves `capacity` calls
//! at once; the excess waits in its FIFO queue (`Queueing`) or, beyond a
//! small queue, is answered 503 (`Shedding`); an `outage` phase answers
//! every call 503 at once.
//!
//! Only the `Limit` trait and `Sample::new` are used, so the same file runs
//! against older versions of the algorithms (the "before" figures).

mod trace;

pub use trace::Trace;

use edgeshed::limit::adaptive::{Limit, Sample};
use edgeshed::time::Instant;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Duration;

/// What the origin does with calls beyond its capacity.
#[derive(Clone, Copy, Debug)]
pub enum Origin {
    /// Queues them all: latency grows with load.
    Queueing,
    /// Queues up to `queue`, answers 503 beyond, `reject_ms` later (0: at once).
    Shedding { queue: usize, reject_ms: u64 },
}

/// Where the calls come from.
#[derive(Clone, Copy, Debug)]
pub enum Load {
    /// Poisson-free open loop: `times` the first phase's capacity, spread
    /// evenly over the clients and over time.
    Open { times: f64 },
    /// Closed loop: `users` in all (spread over the clients), each sending
    /// its next call 0–2 ms (uniform: client and network jitter) after the
    /// last one finished, whether served, dropped or shed.
    Closed { users: usize },
}

/// One phase of a run: the origin's capacity for `ms` milliseconds, or an
/// outage (every call answered 503 at once).
#[derive(Clone, Copy, Debug)]
pub struct Phase {
    pub ms: u64,
    pub capacity: usize,
    pub outage: bool,
}

impl Phase {
    pub fn new(ms: u64, capacity: usize) -> Self {
        Self {
            ms,
            capacity,
            outage: false,
        }
    }

    pub fn outage(ms: u64, capacity: usize) -> Self {
        Self {
            ms,
            capacity,
            outage: true,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Scenario {
    pub clients: usize,
    pub load: Load,
    pub origin: Origin,
    pub service_ms: u64,
    /// Service times drawn uniformly from `service_ms * [1 - spread, 1 +
    /// spread]` (0: all equal), from a fixed seed.
    pub spread: f64,
    pub phases: Vec<Phase>,
    /// Seeds the service times, the jitter and the arrival order.
    pub seed: u64,
}

/// A small deterministic generator (xorshift64*), uniform in [0, 1).
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn service(&mut self, scenario: &Scenario) -> u64 {
        let spread = scenario.spread * (2.0 * self.next() - 1.0);
        ((scenario.service_ms as f64 * (1.0 + spread)).round() as u64).max(1)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Job {
    client: usize,
    started: u64,
    in_flight: usize,
}

struct Client<L> {
    algorithm: L,
    in_flight: usize,
    credit: f64,
    /// Closed loop: users ready to send now, and users thinking until a step.
    ready: usize,
    thinking: Vec<u64>,
}

fn at(ms: u64) -> Instant {
    Instant::from_origin(Duration::from_millis(ms))
}

/// Runs `scenario` with one fresh `make()` limiter per client; checks on
/// every step that each limit lies within its bounds and that no call is
/// admitted beyond the current limit.
pub fn run<L: Limit>(make: impl Fn() -> L, scenario: &Scenario) -> Trace {
    let bounds = make().bounds();
    let n = scenario.clients;
    let mut clients: Vec<Client<L>> = (0..n)
        .map(|index| Client {
            algorithm: make(),
            in_flight: 0,
            credit: 0.0,
            ready: match scenario.load {
                Load::Open { .. } => 0,
                Load::Closed { users } => users / n + usize::from(index < users % n),
            },
            thinking: Vec::new(),
        })
        .collect();
    let first = scenario.phases[0].capacity as f64;
    let per_ms = match scenario.load {
        Load::Open { times } => times * first / scenario.service_ms as f64 / n as f64,
        Load::Closed { .. } => 0.0,
    };
    let mut trace = Trace::new(n, scenario.service_ms);
    let mut busy: BinaryHeap<Reverse<(u64, Job)>> = BinaryHeap::new();
    let mut rejecting: BinaryHeap<Reverse<(u64, Job)>> = BinaryHeap::new();
    let mut queue: VecDeque<Job> = VecDeque::new();
    let mut draw = Draw(0x9e37_79b9_7f4a_7c15 ^ scenario.seed.wrapping_mul(0x1000_0000_01b3));
    let mut now = 0u64;
    let closed = matches!(scenario.load, Load::Closed { .. });
    for phase in &scenario.phases {
        for _ in 0..phase.ms {
            let cap = phase.capacity;
            // Completions (served, then 503s due now), then the queue moves up.
            let mut finished: Vec<(Job, bool)> = Vec::new();
            while busy.peek().is_some_and(|Reverse((end, _))| *end <= now) {
                finished.push((busy.pop().unwrap().0 .1, false));
            }
            while rejecting
                .peek()
                .is_some_and(|Reverse((end, _))| *end <= now)
            {
                finished.push((rejecting.pop().unwrap().0 .1, true));
            }
            for (job, dropped) in finished {
                finish(&mut clients, &mut trace, job, now, dropped, closed);
            }
            // Thinking users whose time is up are ready; the finished ones think.
            for client in clients.iter_mut() {
                let pending = client.ready;
                client.ready = 0;
                for _ in 0..pending {
                    client.thinking.push(now + (draw.next() * 3.0) as u64);
                }
                let before = client.thinking.len();
                client.thinking.retain(|&until| until > now);
                client.ready = before - client.thinking.len();
            }
            while busy.len() < cap {
                let Some(job) = queue.pop_front() else { break };
                busy.push(Reverse((now + draw.service(scenario), job)));
            }
            // Arrivals, the clients in a random order.
            let mut order: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                order.swap(i, (draw.next() * (i + 1) as f64) as usize);
            }
            for index in order {
                let mut arrivals = if closed {
                    core::mem::take(&mut clients[index].ready)
                } else {
                    clients[index].credit += per_ms;
                    let whole = clients[index].credit.floor();
                    clients[index].credit -= whole;
                    whole as usize
                };
                while arrivals > 0 {
                    arrivals -= 1;
                    let client = &mut clients[index];
                    let limit = client.algorithm.limit();
                    assert!(
                        limit >= bounds.min() && limit <= bounds.max(),
                        "limit {limit} out of {bounds:?}"
                    );
                    if client.in_flight >= limit {
                        trace.shed(index);
                        if closed {
                            client.ready += 1; // retries next step
                        }
                        continue;
                    }
                    client.in_flight += 1;
                    let job = Job {
                        client: index,
                        started: now,
                        in_flight: client.in_flight,
                    };
                    trace.reached();
                    if phase.outage {
                        trace.reject();
                        finish(&mut clients, &mut trace, job, now, true, closed);
                    } else if busy.len() < cap {
                        busy.push(Reverse((now + draw.service(scenario), job)));
                    } else {
                        match scenario.origin {
                            Origin::Queueing => queue.push_back(job),
                            Origin::Shedding { queue: room, .. } if queue.len() < room => {
                                queue.push_back(job)
                            }
                            Origin::Shedding { reject_ms, .. } => {
                                trace.reject();
                                if reject_ms > 0 {
                                    rejecting.push(Reverse((now + reject_ms, job)));
                                } else {
                                    finish(&mut clients, &mut trace, job, now, true, closed);
                                }
                            }
                        }
                    }
                }
            }
            let limits: Vec<usize> = clients.iter().map(|c| c.algorithm.limit()).collect();
            trace.step(cap, busy.len() + queue.len(), &limits);
            now += 1;
        }
    }
    trace
}

/// A call ends: its sample goes to its client's algorithm.
fn finish<L: Limit>(
    clients: &mut [Client<L>],
    trace: &mut Trace,
    job: Job,
    now: u64,
    dropped: bool,
    closed: bool,
) {
    let client = &mut clients[job.client];
    let rtt = Duration::from_millis(now - job.started);
    let sample = Sample::new(at(job.started), rtt, job.in_flight, dropped);
    client.algorithm.update(&sample);
    client.in_flight -= 1;
    if !dropped {
        trace.served();
    }
    if closed {
        client.ready += 1;
    }
}
