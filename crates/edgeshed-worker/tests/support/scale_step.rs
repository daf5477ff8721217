//! What each event of the scale simulation does (`scale_sim.rs`).

use super::events::Ev;
use super::object::Reply;
use super::Sim;
use edgeshed_worker::budget::Waiting;

impl Sim {
    fn alive(&self, slot: usize, gen: u64) -> bool {
        self.isolates[slot].gen == gen
    }

    pub(super) fn handle(&mut self, ev: Ev) {
        let now = self.now;
        match ev {
            Ev::Arrival => {
                self.arrive();
                let gap = self.gap();
                self.at(now + gap, Ev::Arrival);
            }
            Ev::Lease {
                slot,
                gen,
                no,
                req,
                back,
            } => {
                let (answer, served) = self.object.lease(&format!("{slot}.{gen}"), no, req, now);
                if let Some(reply) = answer {
                    self.at(now + back, Ev::Reply { slot, gen, reply });
                }
                self.route(served);
            }
            Ev::Watch {
                slot,
                gen,
                no,
                watch,
                back,
            } => {
                let (answer, served) = self.object.watch(&format!("{slot}.{gen}"), no, watch, now);
                if let Some(reply) = answer {
                    self.at(now + back, Ev::Reply { slot, gen, reply });
                }
                self.route(served);
            }
            Ev::Reply { slot, gen, reply } if self.alive(slot, gen) => {
                self.on_reply(slot, reply);
                self.drive(slot);
            }
            Ev::LeaseTimeout { slot, gen, no } if self.alive(slot, gen) => {
                let iso = &mut self.isolates[slot];
                if iso.lease_out && iso.lease_no == no {
                    iso.lease_out = false;
                    iso.holder.on_failure();
                    self.report.failures += 1;
                    self.drive(slot);
                }
            }
            Ev::WatchTimeout { slot, gen, no } if self.alive(slot, gen) => {
                let iso = &mut self.isolates[slot];
                if iso.watch_out && iso.watch_no == no {
                    iso.watch_out = false;
                    iso.holder.on_watch_failure(now);
                    self.drive(slot);
                }
            }
            Ev::CallEnd { slot, gen } => {
                self.origin -= 1;
                if self.alive(slot, gen) {
                    self.isolates[slot].holder.finish(now);
                    self.drive(slot);
                }
            }
            Ev::Wake { slot, gen } if self.alive(slot, gen) => self.drive(slot),
            Ev::Timer { slot, gen, at }
                if self.alive(slot, gen) && self.isolates[slot].timer_at == Some(at) =>
            {
                self.isolates[slot].timer_at = None;
                self.drive(slot);
            }
            Ev::Object { at } if self.object.alarm_at == Some(at) => {
                let served = self.object.alarm(now);
                self.route(served);
            }
            Ev::Evict { slot } => {
                let old = &self.isolates[slot];
                let lost = old
                    .waiting
                    .iter()
                    .filter(|r| self.measured(r.arrived))
                    .count();
                self.report.lost += lost as u64;
                self.report.evictions += 1;
                self.evicted.insert(old.id.clone(), now);
                let next = self.isolate(slot, old.gen + 1);
                self.isolates[slot] = next;
                let life = self.schedule.exp(self.sc.lifetime);
                self.at(now + life, Ev::Evict { slot });
            }
            Ev::Restart => {
                let failed = self.object.restart(now);
                self.route(failed);
                if let Some(every) = self.sc.restart_every {
                    let next = now + self.schedule.exp(every);
                    self.at(next, Ev::Restart);
                }
            }
            Ev::Slow => {
                if let Some((every, duration, _)) = self.sc.slow {
                    self.slow_until = now + duration;
                    let next = now + duration + self.schedule.exp(every);
                    self.at(next, Ev::Slow);
                }
            }
            _ => {}
        }
    }

    /// Sends the object's answers to their holders, and arms its alarm.
    fn route(&mut self, replies: Vec<(String, Reply)>) {
        for (holder, reply) in replies {
            let (slot, gen) = holder.split_once('.').unwrap();
            let (slot, gen) = (slot.parse().unwrap(), gen.parse().unwrap());
            let leg = self.leg();
            self.at(self.now + leg, Ev::Reply { slot, gen, reply });
        }
        if let Some(next) = self.object.next_run() {
            let next = next.max(self.now + 1);
            if self.object.alarm_at.is_none_or(|armed| next < armed) {
                self.object.alarm_at = Some(next);
                self.at(next, Ev::Object { at: next });
            }
        }
    }

    fn on_reply(&mut self, slot: usize, reply: Reply) {
        let now = self.now;
        let iso = &mut self.isolates[slot];
        match reply {
            Reply::Lease(no, grant) if iso.lease_out && iso.lease_no == no => {
                iso.lease_out = false;
                match grant {
                    Some(grant) => iso.holder.on_grant(now, grant),
                    None => {
                        iso.holder.on_failure();
                        self.report.failures += 1;
                    }
                }
            }
            Reply::Notice(no, contended) if iso.watch_out && iso.watch_no == no => {
                iso.watch_out = false;
                match contended {
                    Some(contended) => iso.holder.on_notice(now, contended),
                    None => iso.holder.on_watch_failure(now),
                }
            }
            _ => {}
        }
    }

    /// The isolate admits what its lease allows, kicks its holder (a lease
    /// call or a watch), refuses what must be refused and arms its timer,
    /// as `src/handler/budget/{admit,calls}.rs` do.
    pub(super) fn drive(&mut self, slot: usize) {
        let now = self.now;
        while let Some(&front) = self.isolates[slot].waiting.front() {
            if !self.isolates[slot].holder.try_admit(now) {
                break;
            }
            self.isolates[slot].waiting.pop_front();
            self.admit(slot, front);
        }
        let waiting = self.waiting(slot);
        let (go, back) = (self.leg(), self.leg());
        let timeout = self.call_timeout();
        let iso = &mut self.isolates[slot];
        let gen = iso.gen;
        if let Some(req) = iso.holder.poll(now, waiting) {
            iso.lease_no += 1;
            iso.lease_out = true;
            // a lease call supersedes the watch
            iso.watch_out = false;
            let no = iso.lease_no;
            self.at(
                now + go,
                Ev::Lease {
                    slot,
                    gen,
                    no,
                    req,
                    back,
                },
            );
            self.at(
                now + req.wait_ms + timeout,
                Ev::LeaseTimeout { slot, gen, no },
            );
        } else if let Some(watch) = iso.holder.watch(now) {
            iso.watch_no += 1;
            iso.watch_out = true;
            let no = iso.watch_no;
            self.at(
                now + go,
                Ev::Watch {
                    slot,
                    gen,
                    no,
                    watch,
                    back,
                },
            );
            self.at(
                now + watch.wait_ms + timeout,
                Ev::WatchTimeout { slot, gen, no },
            );
        }
        let iso = &mut self.isolates[slot];
        let pending = iso.holder.pending();
        let hold = !iso.holder.reachable() || iso.holder.refuses_at_once(now);
        let start = self.start + self.sc.warmup;
        let backed = iso.holder.backed_off(now);
        let leased = iso.holder.held(now) > 0;
        let mut why = [0u64; 5];
        iso.waiting.retain(|r| {
            let refuse = now >= r.own || (!pending && (now >= r.give_up || hold));
            if refuse && r.arrived >= start {
                let reason = if now >= r.own {
                    0
                } else if backed {
                    1
                } else if now >= r.give_up && !leased {
                    2
                } else if now >= r.give_up {
                    3
                } else {
                    4
                };
                why[reason] += 1;
            }
            !refuse
        });
        for (total, n) in self.report.refused_why.iter_mut().zip(why) {
            *total += n;
        }
        let refused: u64 = why.iter().sum();
        self.report.refused_budget += refused;
        let waiting = self.waiting(slot);
        let iso = &mut self.isolates[slot];
        if let Some(due) = iso.holder.next_poll_at(now, waiting) {
            let due = due.max(now + 1);
            if iso.timer_at.is_none_or(|armed| due < armed) {
                iso.timer_at = Some(due);
                self.at(due, Ev::Timer { slot, gen, at: due });
            }
        }
    }

    pub(super) fn waiting(&self, slot: usize) -> Waiting {
        let iso = &self.isolates[slot];
        Waiting {
            count: iso.waiting.len() as u32,
            until: iso.waiting.iter().map(|r| r.give_up).max().unwrap_or(0),
        }
    }
}
