//! Requests in the scale simulation (`scale_sim.rs`): where they arrive,
//! and the calls they make at the origin once admitted.

use super::events::Ev;
use super::{Request, Sim};

impl Sim {
    /// A request arrives at one isolate (hot ones get `hot_share`).
    pub(super) fn arrive(&mut self) {
        let (n, hot) = (
            self.sc.isolates as u64,
            self.sc.hot.min(self.sc.isolates) as u64,
        );
        let slot = if self.traffic.unit() < self.sc.hot_share || hot >= n {
            self.traffic.range(0, hot - 1)
        } else {
            self.traffic.range(hot, n - 1)
        } as usize;
        let (lo, hi) = self.sc.service;
        let service = self.traffic.range(lo, hi).min(self.sc.timeout);
        let now = self.now;
        if self.measured(now) {
            self.report.offered += 1;
        }
        let iso = &mut self.isolates[slot];
        if iso.holder.in_flight() as usize + iso.waiting.len() >= self.sc.local as usize {
            if self.measured(now) {
                self.report.refused_local += 1;
            }
            return;
        }
        let own = now + self.sc.timeout;
        let give_up = own.min(now + self.cfg.patience_ms);
        iso.waiting.push_back(Request {
            arrived: now,
            service,
            give_up,
            own,
        });
        let gen = iso.gen;
        self.at(give_up, Ev::Wake { slot, gen });
        self.at(own, Ev::Wake { slot, gen });
        self.drive(slot);
    }

    /// One call starts at the origin.
    pub(super) fn admit(&mut self, slot: usize, req: Request) {
        let now = self.now;
        self.origin += 1;
        self.report.peak = self.report.peak.max(self.origin);
        assert!(
            self.origin <= self.sc.budget,
            "{} calls at the origin at {now} ms (budget {}), isolate {slot}",
            self.origin,
            self.sc.budget
        );
        let service = req.service;
        let gen = self.isolates[slot].gen;
        self.at(now + service, Ev::CallEnd { slot, gen });
        if self.measured(req.arrived) {
            self.report.admitted += 1;
            self.report.waits.push(now - req.arrived);
            self.busy_ms += service;
        }
    }
}
