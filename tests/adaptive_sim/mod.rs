#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
#![allow(dead_code)]
//! A simulated origin and open-loop load, driven by a `ManualClock` in 1 ms
//! steps: no real time, fully deterministic.
//!
//! Each client is an independent limiter (an `Admission` that sheds, driven
//! by a `Controller`): three clients are three isolates that know nothing
//! of each other. The origin serves `capacity` calls at once for
//! `service_ms` each; the excess waits in its FIFO queue (`Queueing`) or,
//! beyond a small queue, is answered 503 at once (`Shedding`).

use edgeshed::admission::Admission;
use edgeshed::limit::adaptive::{Controller, Limit, Started};
use edgeshed::semaphore::Permit;
use edgeshed::time::{Clock, ManualClock};
use std::collections::VecDeque;
use std::time::Duration;

/// What the origin does with calls beyond its capacity.
#[derive(Clone, Copy, Debug)]
pub enum Origin {
    /// Queues them all: latency grows with load.
    Queueing,
    /// Queues up to `queue`, answers 503 beyond, `reject_ms` after the
    /// call (0: at once, within the same step).
    Shedding { queue: usize, reject_ms: u64 },
}

/// One phase of a run: the origin's capacity for `ms` milliseconds.
#[derive(Clone, Copy, Debug)]
pub struct Phase {
    pub ms: u64,
    pub capacity: usize,
}

#[derive(Clone, Debug)]
pub struct Scenario {
    pub clients: usize,
    /// Offered load as a multiple of the first phase's capacity.
    pub load: f64,
    pub origin: Origin,
    pub service_ms: u64,
    /// Each call's service time is drawn uniformly from
    /// `service_ms * [1 - spread, 1 + spread]` (0: every call takes
    /// `service_ms`), from a fixed seed.
    pub service_spread: f64,
    pub phases: Vec<Phase>,
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

    /// One service time in whole milliseconds, at least 1.
    fn service(&mut self, scenario: &Scenario) -> u64 {
        let spread = scenario.service_spread * (2.0 * self.next() - 1.0);
        ((scenario.service_ms as f64 * (1.0 + spread)).round() as u64).max(1)
    }
}

/// What one phase measured. "Settled" figures cover its second half.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub capacity: usize,
    /// Mean calls at the origin (in service and queued), second half.
    pub concurrency: f64,
    /// Goodput as a fraction of the origin's capacity, second half.
    pub goodput: f64,
    /// The longest origin queue in the second half.
    pub max_queue: usize,
    /// 503s as a fraction of the calls that reached the origin, second half.
    pub rejected: f64,
    /// Samples (completed calls, all clients) from the phase's start until
    /// a 100 ms mean of the origin's concurrency first lay in [0.8, 1.5] × capacity.
    pub samples_to_adapt: Option<u64>,
    /// The limits of the clients at the phase's end.
    pub limits: Vec<usize>,
}

struct Job {
    client: usize,
    started: Started,
    permit: Permit,
}

struct ClientState<L> {
    admission: Admission,
    controller: Controller<L>,
    credit: f64,
}

/// Runs `scenario` with one fresh `make()` limiter per client; checks on
/// every step that each limit lies within its bounds and that no call is
/// admitted beyond the current limit.
pub fn run<L: Limit>(make: impl Fn() -> L, scenario: &Scenario) -> Vec<Report> {
    let clock = ManualClock::new();
    let mut clients: Vec<ClientState<L>> = (0..scenario.clients)
        .map(|_| {
            let algorithm = make();
            let admission = Admission::shed(algorithm.limit()).unwrap();
            let controller = Controller::new(algorithm, admission.semaphore().clone());
            ClientState {
                admission,
                controller,
                credit: 0.0,
            }
        })
        .collect();
    let bounds = make().bounds();
    let first = scenario.phases[0].capacity as f64;
    let per_ms = scenario.load * first / scenario.service_ms as f64 / scenario.clients as f64;
    let mut busy: Vec<(u64, Job)> = Vec::new();
    let mut queue: VecDeque<Job> = VecDeque::new();
    let mut rejecting: Vec<(u64, Job)> = Vec::new();
    let mut now = 0u64;
    let mut draw = Draw(0x9e37_79b9_7f4a_7c15);
    let mut reports = Vec::new();
    for phase in &scenario.phases {
        let cap = phase.capacity;
        let half = phase.ms / 2;
        let (mut conc_sum, mut ok, mut reached, mut rejected, mut max_queue) =
            (0usize, 0u64, 0u64, 0u64, 0usize);
        let mut samples = 0u64;
        let mut adapt: Option<u64> = None;
        let mut recent: VecDeque<usize> = VecDeque::new();
        for step in 0..phase.ms {
            let late = step >= half;
            let at = clock.now();
            // Completions, then the queue moves up.
            let (done, running): (Vec<_>, Vec<_>) =
                busy.drain(..).partition(|(end, _)| *end <= now);
            busy = running;
            for (_, job) in done {
                clients[job.client]
                    .controller
                    .finish(job.started, at, false);
                drop(job.permit);
                samples += 1;
                if late {
                    ok += 1;
                }
            }
            let (answered, waiting): (Vec<_>, Vec<_>) =
                rejecting.drain(..).partition(|(end, _)| *end <= now);
            rejecting = waiting;
            for (_, job) in answered {
                clients[job.client].controller.finish(job.started, at, true);
                drop(job.permit);
                samples += 1;
            }
            while busy.len() < cap {
                let Some(job) = queue.pop_front() else { break };
                busy.push((now + draw.service(scenario), job));
            }
            // Arrivals: open loop, spread evenly; the clients take turns
            // at arriving first.
            let count = clients.len();
            for turn in 0..count {
                let index = (turn + now as usize) % count;
                let client = &mut clients[index];
                client.credit += per_ms;
                while client.credit >= 1.0 {
                    client.credit -= 1.0;
                    let Some(permit) = client.admission.try_admit() else {
                        continue;
                    };
                    let stats = client.admission.stats();
                    assert!(
                        stats.in_flight <= stats.limit,
                        "admitted beyond the limit: {stats:?}"
                    );
                    let job = Job {
                        client: index,
                        started: client.controller.start(at),
                        permit,
                    };
                    if late {
                        reached += 1;
                    }
                    if busy.len() < cap {
                        busy.push((now + draw.service(scenario), job));
                    } else {
                        match scenario.origin {
                            Origin::Queueing => queue.push_back(job),
                            Origin::Shedding { queue: room, .. } if queue.len() < room => {
                                queue.push_back(job)
                            }
                            Origin::Shedding { reject_ms, .. } if reject_ms > 0 => {
                                rejecting.push((now + reject_ms, job));
                                if late {
                                    rejected += 1;
                                }
                            }
                            Origin::Shedding { .. } => {
                                client.controller.finish(job.started, at, true);
                                drop(job.permit);
                                samples += 1;
                                if late {
                                    rejected += 1;
                                }
                            }
                        }
                    }
                }
            }
            for client in &clients {
                let limit = client.controller.limit();
                assert!(
                    limit >= bounds.min() && limit <= bounds.max(),
                    "limit {limit} out of {bounds:?}"
                );
                assert_eq!(client.admission.stats().limit, limit);
            }
            let concurrency = busy.len() + queue.len();
            recent.push_back(concurrency);
            if recent.len() > 100 {
                recent.pop_front();
            }
            let mean = recent.iter().sum::<usize>() as f64 / recent.len() as f64;
            if adapt.is_none()
                && recent.len() == 100
                && mean >= 0.8 * cap as f64
                && mean <= 1.5 * cap as f64
            {
                adapt = Some(samples);
            }
            if late {
                conc_sum += concurrency;
                max_queue = max_queue.max(queue.len());
            }
            clock.advance(Duration::from_millis(1));
            now += 1;
        }
        let measured = (phase.ms - half) as f64;
        reports.push(Report {
            capacity: cap,
            concurrency: conc_sum as f64 / measured,
            goodput: ok as f64 / (measured * cap as f64 / scenario.service_ms as f64),
            max_queue,
            rejected: if reached == 0 {
                0.0
            } else {
                rejected as f64 / reached as f64
            },
            samples_to_adapt: adapt,
            limits: clients.iter().map(|c| c.controller.limit()).collect(),
        });
    }
    reports
}
