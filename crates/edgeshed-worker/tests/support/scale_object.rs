//! The budget object of the scale simulation (`scale_sim.rs`): the real
//! `LeaseTable` behind the shell `worker/budget.mjs` puts around it. Each
//! lease call or watch is handled when it arrives; a call the table keeps
//! is answered by `answer_parked`, which the shell runs after every call,
//! at a kept call's deadline (`waitMs + 1`) and at the alarm (the earliest
//! lease expiry). A restart loses everything in memory: the table is a
//! fresh one in learning mode for a whole TTL (as with no stored horizon)
//! and the calls it kept fail.
#![allow(dead_code)]

use std::collections::BTreeMap;

use edgeshed_worker::budget::{Answer, Grant, LeaseRequest, LeaseTable, WatchRequest};

/// What the object sends back to a holder, with the call's number.
#[derive(Debug, Clone, Copy)]
pub enum Reply {
    /// The answer to lease call `no` (`None`: it failed).
    Lease(u64, Option<Grant>),
    /// The answer to watch `no` (`None`: it failed).
    Notice(u64, Option<bool>),
}

/// One origin's budget object.
pub struct Object {
    pub table: LeaseTable,
    limit: u32,
    ttl: u64,
    /// The calls the table keeps, per holder: (lease call, watch) numbers.
    kept: BTreeMap<String, (Option<u64>, Option<u64>)>,
    /// When the alarm is set for.
    pub alarm_at: Option<u64>,
    /// Calls handled (lease calls and watches) per simulated second.
    pub per_second: Vec<u32>,
    pub restarts: u64,
    /// Watches that reached the object while a newer lease call of their
    /// holder was kept there.
    pub stale_watches: u64,
}

impl Object {
    pub fn new(limit: u32, ttl: u64, now: u64) -> Self {
        Self {
            table: LeaseTable::new(limit, ttl, now),
            limit,
            ttl,
            kept: BTreeMap::new(),
            alarm_at: None,
            per_second: Vec::new(),
            restarts: 0,
            stale_watches: 0,
        }
    }

    fn count(&mut self, now: u64) {
        let second = (now / 1_000) as usize;
        if self.per_second.len() <= second {
            self.per_second.resize(second + 1, 0);
        }
        self.per_second[second] += 1;
    }

    /// Drops what `holder`'s new call supersedes (the shell answers it
    /// "superseded", which the holder ignores: its number is old).
    fn drop_kept(&mut self, holder: &str) {
        self.kept.remove(holder);
    }

    /// Lease call `no` of `holder`: its answer now, if not kept, and every
    /// kept call answered now.
    pub fn lease(
        &mut self,
        holder: &str,
        no: u64,
        req: LeaseRequest,
        now: u64,
    ) -> (Option<Reply>, Vec<(String, Reply)>) {
        self.count(now);
        self.drop_kept(holder);
        let answer = match self.table.ask(holder, req, now) {
            Some(grant) => Some(Reply::Lease(no, Some(grant))),
            None => {
                self.kept.entry(holder.to_owned()).or_default().0 = Some(no);
                None
            }
        };
        (answer, self.serve(now))
    }

    /// Watch `no` of `holder`, like [`Object::lease`].
    pub fn watch(
        &mut self,
        holder: &str,
        no: u64,
        watch: WatchRequest,
        now: u64,
    ) -> (Option<Reply>, Vec<(String, Reply)>) {
        self.count(now);
        // a watch that crossed its holder's newer lease call: the shell
        // leaves that call kept (the table answers the watch at once)
        if self.kept.get(holder).is_some_and(|calls| calls.0.is_some()) {
            self.stale_watches += 1;
        } else {
            self.drop_kept(holder);
        }
        let answer = match self
            .table
            .watch(holder, watch.contended, watch.wait_ms, now)
        {
            Some(contended) => Some(Reply::Notice(no, Some(contended))),
            None => {
                self.kept.entry(holder.to_owned()).or_default().1 = Some(no);
                None
            }
        };
        (answer, self.serve(now))
    }

    /// The kept calls the table answers now (the shell's `#serve`).
    pub fn serve(&mut self, now: u64) -> Vec<(String, Reply)> {
        let mut out = Vec::new();
        for answer in self.table.answer_parked(now) {
            let (holder, lease) = match &answer {
                Answer::Lease(holder, _) => (holder.clone(), true),
                Answer::Notice(holder, _) => (holder.clone(), false),
            };
            let Some(calls) = self.kept.get_mut(&holder) else {
                continue;
            };
            let slot = if lease { &mut calls.0 } else { &mut calls.1 };
            let Some(no) = slot.take() else {
                continue;
            };
            if calls.0.is_none() && calls.1.is_none() {
                self.kept.remove(&holder);
            }
            let reply = match answer {
                Answer::Lease(_, grant) => Reply::Lease(no, Some(grant)),
                Answer::Notice(_, contended) => Reply::Notice(no, Some(contended)),
            };
            out.push((holder, reply));
        }
        out
    }

    /// The alarm (or a kept call's timer) fires at `now`: sweeps expired
    /// leases and answers what it can. Returns the replies and the next time
    /// the object wants to run (earliest expiry or kept deadline).
    pub fn alarm(&mut self, now: u64) -> Vec<(String, Reply)> {
        self.alarm_at = None;
        self.table.expire(now);
        self.serve(now)
    }

    /// When the object next needs to run: the earliest lease expiry (its
    /// alarm) or kept call deadline (its timers, `+ 1` as the shell's).
    pub fn next_run(&self) -> Option<u64> {
        let expiry = self.table.next_expiry();
        let kept = self.table.next_parked_at().map(|at| at + 1);
        match (expiry, kept) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The object restarts at `now`: a fresh table (learning for one TTL),
    /// and every call the old one kept fails.
    pub fn restart(&mut self, now: u64) -> Vec<(String, Reply)> {
        self.restarts += 1;
        self.table = LeaseTable::new(self.limit, self.ttl, now);
        self.alarm_at = None;
        let mut out = Vec::new();
        for (holder, (lease, watch)) in core::mem::take(&mut self.kept) {
            if let Some(no) = lease {
                out.push((holder.clone(), Reply::Lease(no, None)));
            }
            if let Some(no) = watch {
                out.push((holder, Reply::Notice(no, None)));
            }
        }
        out
    }
}
