//! The origin of the adaptive simulations (`fleet_sim.rs`): a capacity that
//! queues its excess.
#![allow(dead_code)]

use std::collections::VecDeque;

/// An origin with `capacity` slots that queues the excess (FIFO): a call's
/// round trip is its wait plus its service time, `service` ms or, with
/// `spread`, uniformly 0.5 to 1.5 times that.
pub struct Origin {
    pub capacity: usize,
    pub service: u64,
    pub spread: bool,
    /// (isolate, admitted at, epoch, in flight then), waiting for a slot.
    pub(super) queue: VecDeque<(usize, u64, u64, u32)>,
    /// (ends at, isolate, admitted at, epoch, in flight then).
    serving: Vec<(u64, usize, u64, u64, u32)>,
    seed: u64,
    /// Calls served.
    pub served: u64,
    /// Sum over milliseconds of the calls at the origin (serving + queued).
    pub load_ms: u64,
}

impl Origin {
    pub fn new(capacity: usize, service: u64, spread: bool) -> Self {
        Self {
            capacity,
            service,
            spread,
            queue: VecDeque::new(),
            serving: Vec::new(),
            seed: 0x2545_f491_4f6c_dd1d,
            served: 0,
            load_ms: 0,
        }
    }

    /// Calls at the origin now: served and queued.
    pub fn load(&self) -> usize {
        self.queue.len() + self.serving.len()
    }

    fn service_time(&mut self) -> u64 {
        if !self.spread {
            return self.service;
        }
        // xorshift: deterministic spread in [0.5, 1.5) × service
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        let unit = (self.seed % 1_000) as f64 / 1_000.0;
        ((0.5 + unit) * self.service as f64).round().max(1.0) as u64
    }

    /// Starts what fits and returns the calls that end at `now`.
    pub(super) fn advance(&mut self, now: u64) -> Vec<(usize, u64, u64, u32)> {
        let (done, running): (Vec<_>, Vec<_>) =
            self.serving.drain(..).partition(|&(end, ..)| end <= now);
        self.serving = running;
        while self.serving.len() < self.capacity {
            let Some((i, admitted, epoch, in_flight)) = self.queue.pop_front() else {
                break;
            };
            let end = now + self.service_time();
            self.serving.push((end, i, admitted, epoch, in_flight));
        }
        self.served += done.len() as u64;
        self.load_ms += self.load() as u64;
        done.into_iter()
            .map(|(_, i, admitted, epoch, in_flight)| (i, admitted, epoch, in_flight))
            .collect()
    }
}
