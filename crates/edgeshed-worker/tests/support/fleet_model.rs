//! The model of `budget_fleet.rs`: three holders and one table on a manual
//! clock, with the ways calls get lost, delayed, kept or answered, holders
//! die and tables restart; `check` states what must hold at every step.
#![allow(dead_code)]

use edgeshed_worker::budget::{
    Answer, Grant, HolderConfig, LeaseHolder, LeaseRequest, LeaseTable, Unavailable, Waiting,
};
use proptest::prelude::*;

#[path = "fleet_ops.rs"]
mod fleet_ops;
pub use fleet_ops::{op, Fate, Op, Outcome};

pub const IDS: [&str; 3] = ["isolate-a", "isolate-b", "isolate-c"];
/// The origin's `timeoutMs`: no call lasts longer.
pub const TIMEOUT: u64 = 400;

/// One isolate: its holder, the end times of its calls at the origin, and
/// its call to the table.
pub struct Node {
    pub holder: LeaseHolder,
    pub calls: Vec<u64>,
    pub alive: bool,
    /// Its call waits at the table (an answer from `answer_parked` is its).
    pub parked: bool,
    pub delayed: Option<LeaseRequest>,
    pub returning: Option<Grant>,
}

pub struct Fleet {
    pub limit: u32,
    pub ttl: u64,
    pub now: u64,
    pub table: LeaseTable,
    pub nodes: Vec<Node>,
}

impl Fleet {
    pub fn new(limit: u32, ttl: u64, local: u32) -> Self {
        Self::with_locals(limit, ttl, [local; 3])
    }

    /// Holders with their own local limits.
    pub fn with_locals(limit: u32, ttl: u64, locals: [u32; 3]) -> Self {
        let cfg = |local| HolderConfig::new(local, ttl, Unavailable::Shed).calls_last(TIMEOUT, ttl);
        let node = |local| Node {
            holder: LeaseHolder::new(cfg(local)),
            calls: Vec::new(),
            alive: true,
            parked: false,
            delayed: None,
            returning: None,
        };
        Self {
            limit,
            ttl,
            now: 0,
            table: LeaseTable::new(limit, ttl, 0),
            nodes: locals.into_iter().map(node).collect(),
        }
    }

    /// The table handles `req` of holder `h`; `None` when it holds it.
    fn ask(&mut self, h: usize, req: LeaseRequest) -> Option<Grant> {
        let grant = self.table.ask(IDS[h], req, self.now);
        self.serve_parked();
        grant
    }

    /// Delivers the answers of held asks, as the object does after every
    /// request and at their deadlines.
    fn serve_parked(&mut self) {
        let index = |id: &str| IDS.iter().position(|&known| known == id).unwrap();
        for answer in self.table.answer_parked(self.now) {
            match answer {
                Answer::Lease(id, grant) => {
                    let node = &mut self.nodes[index(&id)];
                    if node.parked && node.alive {
                        node.parked = false;
                        node.holder.on_grant(self.now, grant);
                    }
                }
                Answer::Notice(id, contended) => {
                    let node = &mut self.nodes[index(&id)];
                    if node.alive {
                        node.holder.on_notice(self.now, contended);
                    }
                }
            }
        }
    }

    /// Holder `h` opens its watch if it has one to open.
    fn watch(&mut self, h: usize) {
        let Some(watch) = self.nodes[h].holder.watch(self.now) else {
            return;
        };
        if let Some(contended) = self
            .table
            .watch(IDS[h], watch.contended, watch.wait_ms, self.now)
        {
            self.nodes[h].holder.on_notice(self.now, contended);
        }
        self.serve_parked();
    }

    pub fn apply(&mut self, op: Op) {
        let now = self.now;
        let alive = |fleet: &Self, h: usize| fleet.nodes[h].alive;
        match op {
            Op::Poll { h, queued, fate } if alive(self, h) => {
                let patience = self.nodes[h].holder.config().patience_ms;
                let waiting = Waiting {
                    count: queued,
                    until: now + patience,
                };
                let Some(req) = self.nodes[h].holder.poll(now, waiting) else {
                    self.watch(h);
                    return;
                };
                match fate {
                    Fate::Answer => match self.ask(h, req) {
                        Some(grant) => self.nodes[h].holder.on_grant(now, grant),
                        None => self.nodes[h].parked = true,
                    },
                    Fate::LoseAnswer => {
                        self.ask(h, req);
                        self.nodes[h].holder.on_failure();
                    }
                    Fate::Drop => self.nodes[h].holder.on_failure(),
                    Fate::Delay => self.nodes[h].delayed = Some(req),
                }
            }
            Op::Arrive { h, outcome } => {
                let Some(req) = self.nodes[h].delayed.take() else {
                    return;
                };
                // a held ask of a delayed call: its answer is lost or late
                let grant = self.ask(h, req).unwrap_or(Grant {
                    permits: 0,
                    ttl_ms: self.ttl,
                    renew_ms: 0,
                    learning: false,
                    contended: false,
                    epoch: 0,
                });
                let node = &mut self.nodes[h];
                if !node.alive {
                    return;
                }
                match outcome {
                    Outcome::Answer => node.holder.on_grant(now, grant),
                    Outcome::Lost => node.holder.on_failure(),
                    Outcome::Late => node.returning = Some(grant),
                }
            }
            Op::Return { h } => {
                if let Some(grant) = self.nodes[h].returning.take() {
                    if alive(self, h) {
                        self.nodes[h].holder.on_grant(now, grant);
                    }
                }
            }
            Op::GiveUp { h } => {
                let node = &mut self.nodes[h];
                if node.parked && node.alive {
                    node.parked = false;
                    node.holder.on_failure();
                }
            }
            Op::Admit { h } if alive(self, h) && self.nodes[h].holder.try_admit(now) => {
                self.nodes[h].calls.push(now + TIMEOUT);
            }
            Op::Finish { h } if alive(self, h) => {
                let node = &mut self.nodes[h];
                if !node.calls.is_empty() {
                    node.calls.remove(0);
                    node.holder.finish(self.now);
                }
            }
            Op::Advance { ms } => {
                self.now += ms;
                // calls end at their timeout at the latest
                let now = self.now;
                for node in &mut self.nodes {
                    let before = node.calls.len();
                    node.calls.retain(|&end| end > now);
                    for _ in node.calls.len()..before {
                        node.holder.finish(now);
                    }
                }
                self.serve_parked();
            }
            Op::Sweep => {
                self.table.expire(now);
                self.serve_parked();
            }
            Op::Restart => self.table = LeaseTable::new(self.limit, self.ttl, now),
            Op::Kill { h } => self.nodes[h].alive = false,
            _ => {}
        }
    }

    /// The origin has at most `limit` calls in flight; the fleet holds at
    /// most the limit, by the holders' own count (what they may spend) and
    /// by the table's; once the table has learned, it covers every permit a
    /// live holder may spend.
    pub fn check(&self) -> Result<(), TestCaseError> {
        let now = self.now;
        let at_origin: usize = self.nodes.iter().map(|node| node.calls.len()).sum();
        prop_assert!(
            at_origin <= self.limit as usize,
            "{} calls at the origin at {}",
            at_origin,
            now
        );
        let held: Vec<u32> = self
            .nodes
            .iter()
            .map(|node| if node.alive { node.holder.held(now) } else { 0 })
            .collect();
        prop_assert!(
            held.iter().sum::<u32>() <= self.limit,
            "holders {:?} at {}",
            held,
            now
        );
        let mut table = self.table.clone();
        table.expire(now);
        prop_assert!(
            table.leased() <= self.limit,
            "table {} at {}",
            table.leased(),
            now
        );
        if !table.learning(now) {
            for (h, id) in IDS.iter().enumerate() {
                prop_assert!(
                    held[h] <= table.leased_to(id),
                    "{} holds {} > {}",
                    id,
                    held[h],
                    table.leased_to(id)
                );
            }
        }
        Ok(())
    }

    /// Ends every call and runs the live holders idle: within one TTL every
    /// permit is back in the table.
    pub fn drain(&mut self) -> Result<(), TestCaseError> {
        for h in 0..IDS.len() {
            self.apply(Op::Arrive {
                h,
                outcome: Outcome::Answer,
            });
            self.apply(Op::Return { h });
            self.apply(Op::GiveUp { h });
        }
        self.apply(Op::Advance { ms: TIMEOUT });
        let idle_at = self.now;
        while self.now <= idle_at + self.ttl {
            for h in 0..IDS.len() {
                self.apply(Op::Poll {
                    h,
                    queued: 0,
                    fate: Fate::Answer,
                });
            }
            self.check()?;
            self.apply(Op::Advance { ms: 10 });
        }
        self.table.expire(self.now);
        prop_assert_eq!(
            self.table.leased(),
            0,
            "stranded: {:?}",
            self.table.leases().collect::<Vec<_>>()
        );
        prop_assert_eq!(self.table.next_expiry(), None);
        prop_assert_eq!(self.table.parked(), 0);
        for node in &self.nodes {
            prop_assert_eq!(node.holder.held(self.now), 0);
        }
        Ok(())
    }
}
