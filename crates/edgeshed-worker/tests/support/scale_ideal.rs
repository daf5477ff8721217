//! The reference of the scale simulation (`scale_sim.rs`): what one exact
//! limit of the budget's size would admit from the same traffic (the same
//! arrival rate and service times, requests waiting in one FIFO queue up to
//! the same patience). A perfect fleet budget would do as well; none does
//! better without over-admitting.
#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::kit::{Rng, Scenario};

/// Admitted over min(offered, capacity × time), as [`super::Report::goodput`],
/// for one exact limit of `sc.budget` with requests waiting up to
/// `patience` ms (at most the origin's `timeoutMs`).
pub fn ideal_goodput(sc: &Scenario, patience: u64) -> f64 {
    let mut rng = Rng::new(sc.seed ^ 0x1dea_1000);
    let rate_per_ms = sc.load * sc.capacity_rps() / 1_000.0;
    let (from, end) = (sc.warmup, sc.duration);
    let patience = patience.min(sc.timeout);
    let mut ends: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
    // (arrived, gives up at)
    let mut queue: VecDeque<(u64, u64)> = VecDeque::new();
    let (mut offered, mut admitted) = (0u64, 0u64);
    let mut clock = 0.0f64;
    loop {
        clock += -(1.0 - rng.unit()).ln() / rate_per_ms;
        let now = clock as u64;
        if now > end {
            break;
        }
        // calls that ended by now free their permits to the queue, in order
        while let Some(&Reverse(at)) = ends.peek() {
            if at > now {
                break;
            }
            ends.pop();
            while let Some(&(arrived, until)) = queue.front() {
                queue.pop_front();
                if until >= at {
                    admitted += u64::from(arrived >= from);
                    ends.push(Reverse(at + service(&mut rng, sc)));
                    break;
                }
            }
        }
        while queue.front().is_some_and(|&(_, until)| until < now) {
            queue.pop_front();
        }
        offered += u64::from(now >= from);
        if ends.len() < sc.budget as usize && queue.is_empty() {
            admitted += u64::from(now >= from);
            ends.push(Reverse(now + service(&mut rng, sc)));
        } else {
            queue.push_back((now, now + patience));
        }
    }
    let seconds = (end - from) as f64 / 1_000.0;
    let capacity = sc.capacity_rps() * seconds;
    admitted as f64 / (offered as f64).min(capacity).max(1.0)
}

fn service(rng: &mut Rng, sc: &Scenario) -> u64 {
    rng.range(sc.service.0, sc.service.1).min(sc.timeout)
}
