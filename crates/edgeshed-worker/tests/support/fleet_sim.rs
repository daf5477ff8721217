//! A fleet of isolates sharing one budget, simulated on a manual clock with
//! the real `LeaseTable` and `LeaseHolder`s, the way the worker drives them:
//! every call to the table (asks, watches) takes `rtt` ms each way, the
//! table answers kept asks and watches as the object does, and each
//! isolate's requests wait for a permit at most their patience.
//!
//! Shared by the budget tests (`#[path = "support/fleet_sim.rs"] mod sim;`).
#![allow(dead_code)]

use std::collections::VecDeque;

use edgeshed::limit::adaptive::Outcome;

#[path = "origin_model.rs"]
mod origin_model;
use edgeshed_worker::budget::{
    Answer, Grant, HolderConfig, LeaseHolder, LeaseRequest, LeaseTable, Unavailable, Waiting,
    WatchRequest,
};
pub use origin_model::Origin;

/// A message on its way.
#[derive(Debug, Clone)]
enum Msg {
    Ask(LeaseRequest),
    Watch(WatchRequest),
    Grant(Grant),
    Notice(bool),
}

/// One isolate: its holder, its requests waiting for a permit (when they
/// came, until when they wait), and the end times of its calls.
pub struct Isolate {
    pub holder: LeaseHolder,
    pub waiting: VecDeque<(u64, u64)>,
    pub calls: Vec<u64>,
    /// Requests refused because no permit came while they waited.
    pub refused: u64,
    pub admitted: u64,
    /// Time from arrival to admission, summed (ms).
    pub waited_ms: u64,
}

/// The fleet: isolates, the table, the messages on their way, and what was
/// measured.
pub struct Sim {
    pub now: u64,
    pub rtt: u64,
    pub limit: u32,
    pub table: LeaseTable,
    pub isolates: Vec<Isolate>,
    /// (delivery time, isolate, to the table?, message)
    wire: Vec<(u64, usize, bool, Msg)>,
    /// The most calls the origin had in flight at once.
    pub peak: u32,
    /// The fleet's calls in flight at each refusal.
    pub refused_at_in_flight: Vec<u32>,
    /// Service time of the calls admitted next (ms).
    pub service_ms: u64,
    /// Requests an isolate lets wait at most (more are refused at once).
    pub max_waiting: usize,
    /// Watches opened, across the fleet.
    pub watches: u64,
    /// An origin with a capacity (calls then end when it serves them, and
    /// are reported as samples).
    pub origin: Option<Origin>,
}

fn id(i: usize) -> String {
    format!("isolate-{i}")
}

impl Sim {
    /// `n` isolates of local limit `local`, a budget of `limit`, leases of
    /// `ttl` ms, started past the table's learning period.
    pub fn new(n: usize, local: u32, limit: u32, ttl: u64, rtt: u64) -> Self {
        let cfg = HolderConfig::new(local, ttl, Unavailable::Shed);
        let isolate = || Isolate {
            holder: LeaseHolder::new(cfg),
            waiting: VecDeque::new(),
            calls: Vec::new(),
            refused: 0,
            admitted: 0,
            waited_ms: 0,
        };
        Self {
            now: ttl,
            rtt,
            limit,
            table: LeaseTable::new(limit, ttl, 0),
            isolates: (0..n).map(|_| isolate()).collect(),
            wire: Vec::new(),
            peak: 0,
            refused_at_in_flight: Vec::new(),
            service_ms: 20,
            max_waiting: usize::MAX,
            watches: 0,
            origin: None,
        }
    }

    /// The same fleet with an adaptive table (`table`) in front of `origin`.
    pub fn with_origin(mut self, table: LeaseTable, origin: Origin) -> Self {
        self.table = table;
        self.origin = Some(origin);
        self
    }

    /// The calls in flight at the origin, across the fleet.
    pub fn in_flight(&self) -> u32 {
        self.isolates.iter().map(|iso| iso.calls.len() as u32).sum()
    }

    /// A request arrives at isolate `i` now and waits at most its
    /// holder's patience for a permit.
    pub fn arrive(&mut self, i: usize) {
        let patience = self.isolates[i].holder.config().patience_ms;
        self.arrive_with(i, patience);
    }

    /// A request arrives at isolate `i` now and waits at most `patience`
    /// ms (refused at once if `max_waiting` already wait).
    pub fn arrive_with(&mut self, i: usize, patience: u64) {
        let now = self.now;
        if self.isolates[i].waiting.len() >= self.max_waiting {
            self.isolates[i].refused += 1;
            return;
        }
        self.isolates[i].waiting.push_back((now, now + patience));
        self.drive(i);
    }

    fn send(&mut self, i: usize, to_table: bool, msg: Msg) {
        self.wire.push((self.now + self.rtt, i, to_table, msg));
    }

    /// Replies of the table (answers of kept asks and watches).
    fn answer_parked(&mut self) {
        for answer in self.table.answer_parked(self.now) {
            let (i, msg) = match answer {
                Answer::Lease(holder, grant) => (holder, Msg::Grant(grant)),
                Answer::Notice(holder, contended) => (holder, Msg::Notice(contended)),
            };
            let i = i.trim_start_matches("isolate-").parse().unwrap_or(0);
            self.send(i, false, msg);
        }
    }

    /// Isolate `i` admits what it can, then calls the table if it wants.
    fn drive(&mut self, i: usize) {
        let now = self.now;
        let service = self.service_ms;
        let iso = &mut self.isolates[i];
        while iso.waiting.front().is_some() && iso.holder.try_admit(now) {
            let (arrived, _) = iso.waiting.pop_front().unwrap_or((now, now));
            iso.admitted += 1;
            iso.waited_ms += now - arrived;
            match self.origin.as_mut() {
                Some(origin) => {
                    // ends when the origin serves it
                    iso.calls.push(u64::MAX);
                    let at_start = iso.holder.in_flight();
                    origin
                        .queue
                        .push_back((i, now, iso.holder.epoch(), at_start));
                }
                None => iso.calls.push(now + service),
            }
        }
        let waiting = Waiting {
            count: iso.waiting.len() as u32,
            until: iso.waiting.back().map_or(0, |&(_, until)| until),
        };
        if let Some(req) = iso.holder.poll(now, waiting) {
            self.send(i, true, Msg::Ask(req));
        } else if let Some(watch) = iso.holder.watch(now) {
            self.watches += 1;
            self.send(i, true, Msg::Watch(watch));
        }
        self.peak = self.peak.max(self.in_flight());
    }

    /// One millisecond.
    pub fn step(&mut self) {
        self.now += 1;
        let now = self.now;
        let due: Vec<_> = {
            let (due, later) = std::mem::take(&mut self.wire)
                .into_iter()
                .partition(|(at, ..)| *at <= now);
            self.wire = later;
            due
        };
        for (_, i, to_table, msg) in due {
            match (to_table, msg) {
                (true, Msg::Ask(req)) => {
                    if let Some(grant) = self.table.ask(&id(i), req, now) {
                        self.send(i, false, Msg::Grant(grant));
                    }
                }
                (true, Msg::Watch(watch)) => {
                    let answer = self
                        .table
                        .watch(&id(i), watch.contended, watch.wait_ms, now);
                    if let Some(contended) = answer {
                        self.send(i, false, Msg::Notice(contended));
                    }
                }
                (false, Msg::Grant(grant)) => self.isolates[i].holder.on_grant(now, grant),
                (false, Msg::Notice(contended)) => {
                    self.isolates[i].holder.on_notice(now, contended)
                }
                _ => {}
            }
            self.answer_parked();
        }
        self.answer_parked();
        if let Some(origin) = self.origin.as_mut() {
            for (i, admitted, epoch, in_flight) in origin.advance(now) {
                let iso = &mut self.isolates[i];
                iso.calls.pop();
                iso.holder.finish(now);
                let rtt = std::time::Duration::from_millis(now - admitted);
                iso.holder.sample(epoch, Outcome::Served, rtt, in_flight);
            }
        }
        for i in 0..self.isolates.len() {
            let in_flight = self.in_flight();
            let iso = &mut self.isolates[i];
            let before = iso.calls.len();
            iso.calls.retain(|&end| end > now);
            for _ in iso.calls.len()..before {
                iso.holder.finish(now);
            }
            while iso.waiting.front().is_some_and(|&(_, until)| now >= until) {
                iso.waiting.pop_front();
                iso.refused += 1;
                self.refused_at_in_flight.push(in_flight);
            }
            self.drive(i);
        }
    }

    /// Runs `ms` milliseconds.
    pub fn run(&mut self, ms: u64) {
        for _ in 0..ms {
            self.step();
        }
    }

    /// Requests refused, admitted, and calls to the table (lease calls and
    /// watches), across the fleet.
    pub fn totals(&self) -> (u64, u64, u64) {
        let (refused, admitted, calls) = self.isolates.iter().fold((0, 0, 0), |(r, a, c), iso| {
            (r + iso.refused, a + iso.admitted, c + iso.holder.calls())
        });
        (refused, admitted, calls + self.watches)
    }
}
