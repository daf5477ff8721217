//! The fleet budget end to end in pure Rust: three `LeaseHolder`s against
//! one `LeaseTable` on a manual clock. A property test over random
//! interleavings (asks the table holds, answers lost or delayed, holders
//! killed mid-lease, table restarts, sweeps) checks that the origin never
//! has more calls in flight than the limit, that the fleet never holds more
//! than it, and that nothing is lost (the steady-load simulation is in
//! `budget_batching.rs`, idle capacity in `budget_idle.rs`).
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]

use edgeshed_worker::budget::{
    Answer, Grant, HolderConfig, LeaseHolder, LeaseRequest, LeaseTable, Unavailable, Waiting,
};
use proptest::prelude::*;

const IDS: [&str; 3] = ["isolate-a", "isolate-b", "isolate-c"];
/// The origin's `timeoutMs`: no call lasts longer.
const TIMEOUT: u64 = 400;

/// What happens to a call a holder starts.
#[derive(Debug, Clone, Copy)]
enum Fate {
    /// The table gets it at once (and may hold it).
    Answer,
    /// The table applies it, the answer is lost (the holder times out).
    LoseAnswer,
    /// It never reaches the table.
    Drop,
    /// It arrives later (an `Arrive` step), at whatever table is there then.
    Delay,
}

/// What happens when a delayed call reaches the table.
#[derive(Debug, Clone, Copy)]
enum Outcome {
    /// The answer comes back at once.
    Answer,
    /// The answer is lost.
    Lost,
    /// The answer comes back later (a `Return` step).
    Late,
}

#[derive(Debug, Clone, Copy)]
enum Op {
    Poll {
        h: usize,
        queued: u32,
        fate: Fate,
    },
    Arrive {
        h: usize,
        outcome: Outcome,
    },
    Return {
        h: usize,
    },
    /// The holder times out the call the table holds for it.
    GiveUp {
        h: usize,
    },
    Admit {
        h: usize,
    },
    Finish {
        h: usize,
    },
    Advance {
        ms: u64,
    },
    Sweep,
    Restart,
    /// The isolate dies: it calls nothing and admits nothing any more; its
    /// calls in flight run on until they end (within `TIMEOUT`).
    Kill {
        h: usize,
    },
}

fn op(ttl: u64) -> impl Strategy<Value = Op> {
    let fate = prop_oneof![
        4 => Just(Fate::Answer),
        1 => Just(Fate::LoseAnswer),
        1 => Just(Fate::Drop),
        2 => Just(Fate::Delay),
    ];
    let outcome = prop_oneof![
        2 => Just(Outcome::Answer),
        1 => Just(Outcome::Lost),
        2 => Just(Outcome::Late),
    ];
    prop_oneof![
        6 => (0..3usize, 0..10u32, fate).prop_map(|(h, queued, fate)| Op::Poll { h, queued, fate }),
        2 => (0..3usize, outcome).prop_map(|(h, outcome)| Op::Arrive { h, outcome }),
        1 => (0..3usize).prop_map(|h| Op::Return { h }),
        1 => (0..3usize).prop_map(|h| Op::GiveUp { h }),
        5 => (0..3usize).prop_map(|h| Op::Admit { h }),
        3 => (0..3usize).prop_map(|h| Op::Finish { h }),
        4 => (0..=ttl * 6 / 5).prop_map(|ms| Op::Advance { ms }),
        1 => Just(Op::Sweep),
        1 => Just(Op::Restart),
        1 => (0..3usize).prop_map(|h| Op::Kill { h }),
    ]
}

/// One isolate: its holder, the end times of its calls at the origin, and
/// its call to the table.
struct Node {
    holder: LeaseHolder,
    calls: Vec<u64>,
    alive: bool,
    /// Its call waits at the table (an answer from `answer_parked` is its).
    parked: bool,
    delayed: Option<LeaseRequest>,
    returning: Option<Grant>,
}

struct Fleet {
    limit: u32,
    ttl: u64,
    now: u64,
    table: LeaseTable,
    nodes: Vec<Node>,
}

impl Fleet {
    fn new(limit: u32, ttl: u64, local: u32) -> Self {
        Self::with_locals(limit, ttl, [local; 3])
    }

    /// Holders with their own local limits.
    fn with_locals(limit: u32, ttl: u64, locals: [u32; 3]) -> Self {
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

    fn apply(&mut self, op: Op) {
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
    fn check(&self) -> Result<(), TestCaseError> {
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
    fn drain(&mut self) -> Result<(), TestCaseError> {
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

/// Found by the property test: a request sent while the holder held 3
/// permits reaches a restarted table only after that lease expired (and the
/// old table leased the permits again); the re-registered lease must not be
/// used.
#[test]
fn a_stale_report_to_a_restarted_table_does_not_over_admit() {
    let mut fleet = Fleet::new(8, 1_000, 6);
    let ops = [
        Op::Advance { ms: 1_000 },
        Op::Poll {
            h: 0,
            queued: 3,
            fate: Fate::Answer,
        },
        Op::Advance { ms: 100 },
        Op::Poll {
            h: 0,
            queued: 4,
            fate: Fate::Delay,
        },
        Op::Advance { ms: 900 },
        Op::Poll {
            h: 1,
            queued: 6,
            fate: Fate::Answer,
        },
        Op::Restart,
        Op::Arrive {
            h: 0,
            outcome: Outcome::Answer,
        },
    ];
    for op in ops {
        fleet.apply(op);
        fleet.check().unwrap();
    }
    fleet.drain().unwrap();
}

/// A holder killed mid-lease, at any moment of it, with calls that last
/// the origin's whole `timeoutMs`: its calls run on after its death, and no
/// permit of its lease is granted again before they end (the holder admits
/// no call that could outlive its lease). Another holder, whose ask the table
/// holds, gets the permits at the lease's expiry.
#[test]
fn a_holder_killed_mid_lease_never_lets_the_origin_see_more_than_the_limit() {
    let ttl = 1_000;
    for kill_at in (0..2 * ttl).step_by(37) {
        // a may take half the budget (so it renews at 75 % of the TTL), b all
        let mut fleet = Fleet::with_locals(6, ttl, [3, 6, 6]);
        fleet.apply(Op::Advance { ms: ttl });
        let start = fleet.now;
        // a is busy: it keeps its permits in use, one call ending each step
        // and another starting, which may last TIMEOUT
        while fleet.now < start + kill_at {
            fleet.apply(Op::Finish { h: 0 });
            fleet.apply(Op::Poll {
                h: 0,
                queued: 3,
                fate: Fate::Answer,
            });
            for _ in 0..3 {
                fleet.apply(Op::Admit { h: 0 });
            }
            fleet.check().unwrap();
            fleet.apply(Op::Advance { ms: 7 });
        }
        fleet.apply(Op::Kill { h: 0 });
        let mut got = false;
        while fleet.now < start + kill_at + 2 * ttl {
            fleet.apply(Op::Poll {
                h: 1,
                queued: 6,
                fate: Fate::Answer,
            });
            for _ in 0..6 {
                fleet.apply(Op::Admit { h: 1 });
            }
            let checked = fleet.check();
            assert!(
                checked.is_ok(),
                "killed {kill_at} ms into its lease: {checked:?}"
            );
            got |= fleet.nodes[1].calls.len() == 6;
            fleet.apply(Op::Advance { ms: 7 });
        }
        assert!(
            got,
            "killed at {kill_at}: the dead holder's permits came back to b"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3_000))]

    /// Random interleavings of grant, renew, release, held asks, expiry,
    /// lost and late answers, deaths and restarts across 3 holders never
    /// put more calls at the origin than the limit, never over-lease (right
    /// after a restart included), and lose no permit.
    #[test]
    fn the_origin_never_sees_more_than_the_limit(ops in proptest::collection::vec(op(1_000), 1..120)) {
        let mut fleet = Fleet::new(8, 1_000, 6);
        for op in ops {
            fleet.apply(op);
            fleet.check()?;
        }
        fleet.drain()?;
    }
}
