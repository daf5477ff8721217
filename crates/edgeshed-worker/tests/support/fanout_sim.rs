//! The world of `fanout_random.rs`: origins (a local limit per isolate,
//! and a shared one standing for a fleet budget), requests run as tasks
//! through the real `FanOutAdmission`, and the checks made at every quiet
//! moment: the order, and that every waiter waits on a call that fetches.
#![allow(dead_code)]

use super::kit::{self, Executor, Stage, Staged, Where};
use edgeshed::admission::{Admission, Call, Criticality, QueueDiscipline};
use edgeshed::time::{Clock, ManualClock};
use edgeshed::Key;
use edgeshed_worker::fanout_admission::{FanOutAdmission, Planned};
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;

pub const MS: Duration = Duration::from_millis(1);

#[derive(Clone, Debug)]
pub struct OriginSpec {
    pub limit: usize,
    pub max_queue: usize,
    /// Queue timeout, ms (ticks).
    pub timeout: u64,
    /// Codel's target, if codel.
    pub codel: Option<u64>,
    /// The fleet budget's limit, if budgeted.
    pub budget: Option<usize>,
}

#[derive(Clone, Debug)]
pub struct CallSpec {
    pub origin: usize,
    pub required: bool,
    /// How long the call stays at its origin, ms.
    pub ticks: u64,
}

#[derive(Clone, Debug)]
pub struct RequestSpec {
    pub at: u64,
    pub isolate: usize,
    pub criticality: Criticality,
    pub key: Option<u8>,
    pub calls: Vec<CallSpec>,
}

/// One call as the checks see it.
pub struct Probe {
    pub request: usize,
    pub isolate: usize,
    pub origin: usize,
    pub required: bool,
    pub at: Rc<Cell<Where>>,
}

/// When a request was answered (ms), once it is.
pub type Answered = Rc<Cell<Option<u64>>>;

pub struct Sim {
    pub clock: ManualClock,
    pub specs: Vec<OriginSpec>,
    /// Per isolate, per origin.
    pub locals: [Vec<Admission<ManualClock>>; 2],
    pub budgets: Vec<Option<Admission<ManualClock>>>,
    pub probes: Vec<Probe>,
    /// Each request spawned: when it came, its bound (ms), when it was answered.
    pub ends: Vec<(u64, u64, Answered)>,
}

impl Sim {
    pub fn new(specs: Vec<OriginSpec>) -> Self {
        let clock = ManualClock::new();
        let make = |spec: &OriginSpec, limit| {
            let discipline = match spec.codel {
                Some(target) => QueueDiscipline::Codel {
                    target: MS * target as u32,
                },
                None => QueueDiscipline::Fifo,
            };
            kit::limit(
                &clock,
                limit,
                spec.max_queue,
                MS * spec.timeout as u32,
                discipline,
            )
        };
        let isolate = || {
            specs
                .iter()
                .map(|spec| make(spec, spec.limit))
                .collect::<Vec<_>>()
        };
        let locals = [isolate(), isolate()];
        let budgets = specs
            .iter()
            .map(|spec| spec.budget.map(|limit| make(spec, limit)))
            .collect();
        Self {
            clock,
            specs,
            locals,
            budgets,
            probes: Vec::new(),
            ends: Vec::new(),
        }
    }

    pub fn spawn(&mut self, executor: &mut Executor, request: &RequestSpec) {
        let id = self.ends.len();
        let end = Rc::new(Cell::new(None));
        // each call waits at most its timeouts, then stays its time (+ a tick each)
        let bound = request.calls.iter().map(|call| {
            let spec = &self.specs[call.origin];
            spec.timeout * if spec.budget.is_some() { 2 } else { 1 } + call.ticks + 2
        });
        self.ends.push((request.at, bound.sum(), Rc::clone(&end)));
        let mut call = Call::new(request.criticality);
        if let Some(key) = request.key {
            call = call.with_key(Key::from(format!("k{key}")));
        }
        let mut planned = Vec::new();
        let mut probes = Vec::new();
        for (position, spec) in request.calls.iter().enumerate() {
            let at = Rc::new(Cell::new(Where::Unentered));
            let local = &self.locals[request.isolate][spec.origin];
            let budget = self.budgets[spec.origin].as_ref();
            let acquire = Staged::new(local, budget, call.clone(), Rc::clone(&at));
            planned.push(Planned {
                position,
                origin: spec.origin,
                required: spec.required,
                acquire,
            });
            probes.push((Rc::clone(&at), spec.ticks));
            let (isolate, origin, required) = (request.isolate, spec.origin, spec.required);
            self.probes.push(Probe {
                request: id,
                isolate,
                origin,
                required,
                at,
            });
        }
        let required: Vec<bool> = request.calls.iter().map(|c| c.required).collect();
        let clock = self.clock.clone();
        executor.spawn(async move {
            let admission = FanOutAdmission::new(planned);
            let admission = &admission;
            let calls = probes.iter().enumerate().map(|(position, (at, ticks))| {
                let clock = clock.clone();
                let call = async move {
                    let Ok(held) = admission.turn(position).unwrap().await else {
                        return false;
                    };
                    at.set(Where::Fetching);
                    clock.sleep_until(clock.now() + MS * *ticks as u32).await;
                    drop(held);
                    at.set(Where::Done);
                    true
                };
                Some(Box::pin(call) as Pin<Box<dyn Future<Output = bool> + '_>>)
            });
            kit::until_decided(calls.collect(), required).await;
            for (at, _) in &probes {
                if !matches!(at.get(), Where::Done | Where::Refused) {
                    at.set(Where::Refused); // given up with its request
                }
            }
            end.set(Some(clock.now().since_origin().as_millis() as u64));
        });
    }

    /// Who holds the permit `call` waits for (the permit of `stage`).
    fn holders(&self, waiter: &Probe, stage: Stage) -> Vec<usize> {
        let holds = |p: &Probe| {
            matches!(
                (stage, p.at.get()),
                (_, Where::Holding | Where::Fetching)
                    | (Stage::Local, Where::Queued(Stage::Budget))
            )
        };
        let same_pool = |p: &Probe| stage == Stage::Budget || p.isolate == waiter.isolate;
        let pool = |p: &Probe| p.origin == waiter.origin && same_pool(p) && holds(p);
        self.probes
            .iter()
            .enumerate()
            .filter(|(_, p)| pool(p))
            .map(|(i, _)| i)
            .collect()
    }

    fn pool_has_room(&self, waiter: &Probe, stage: Stage) -> bool {
        let pool = match stage {
            Stage::Local => &self.locals[waiter.isolate][waiter.origin],
            Stage::Budget => self.budgets[waiter.origin].as_ref().unwrap(),
        };
        let stats = pool.stats();
        stats.in_flight < stats.limit
    }

    /// The order: a required call queued for origin o holds back every
    /// sibling stopped at the gate, so each must hold an origin before o.
    pub fn check_order(&self) -> Result<(), String> {
        for waiter in self.probes.iter().filter(|p| p.required) {
            let Where::Queued(stage) = waiter.at.get() else {
                continue;
            };
            for sibling in self.probes.iter().filter(|p| p.request == waiter.request) {
                let later = match sibling.at.get() {
                    Where::Holding => sibling.origin >= waiter.origin,
                    Where::Queued(Stage::Budget) => {
                        !std::ptr::eq(sibling, waiter) && sibling.origin > waiter.origin
                    }
                    _ => false,
                };
                if later {
                    return Err(format!(
                        "request {} waits for origin {} ({stage:?}) while holding origin {} ({:?})",
                        waiter.request,
                        waiter.origin,
                        sibling.origin,
                        sibling.at.get()
                    ));
                }
            }
        }
        Ok(())
    }

    /// The waiting calls that no call fetching will ever free.
    pub fn stuck(&self) -> Vec<usize> {
        let mut live: Vec<bool> = self
            .probes
            .iter()
            .map(|p| p.at.get() == Where::Fetching)
            .collect();
        loop {
            let mut changed = false;
            for (index, probe) in self.probes.iter().enumerate() {
                if live[index] {
                    continue;
                }
                let now_live = match probe.at.get() {
                    Where::Queued(stage) => {
                        !self.pool_has_room(probe, stage)
                            && self.holders(probe, stage).iter().any(|&h| live[h])
                    }
                    Where::Holding => {
                        let mut heads = self.probes.iter().enumerate().filter(|(_, p)| {
                            p.request == probe.request
                                && p.required
                                && matches!(p.at.get(), Where::Queued(_))
                        });
                        let mut any = false;
                        let all = heads.all(|(h, _)| {
                            any = true;
                            live[h]
                        });
                        any && all
                    }
                    _ => false,
                };
                if now_live {
                    live[index] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let waiting = |p: &Probe| matches!(p.at.get(), Where::Queued(_) | Where::Holding);
        (0..self.probes.len())
            .filter(|&i| !live[i] && waiting(&self.probes[i]))
            .collect()
    }

    pub fn describe(&self) -> String {
        let calls: Vec<String> = self
            .probes
            .iter()
            .map(|p| {
                format!(
                    "r{}/i{} o{}{} {:?}",
                    p.request,
                    p.isolate,
                    p.origin,
                    if p.required { "" } else { "?" },
                    p.at.get()
                )
            })
            .collect();
        calls.join(", ")
    }
}
