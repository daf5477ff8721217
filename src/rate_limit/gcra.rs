//! The generic cell rate algorithm (GCRA), as ITU-T I.371 and the ATM Forum
//! define it in its virtual-scheduling form, written from that definition.
//!
//! Each key has one number, its *theoretical arrival time* (TAT): when the
//! next call would be due if calls came exactly at the sustained rate. With
//! emission interval `T` (period / count) and tolerance `τ = (burst − 1) · T`,
//! a call arriving at `t`
//! - **conforms** if `t ≥ TAT − τ`; then `TAT ← max(TAT, t) + T`;
//! - is **refused** otherwise, and would conform from `TAT − τ` on (the
//!   `Retry-After`); the TAT is left alone.
//!
//! A key with no state behaves as one whose TAT is `t` or earlier, so a
//! state with `TAT ≤ t` has fully recovered and can be dropped without
//! changing any later answer. Times are nanoseconds on the limiter's clock.

/// The GCRA parameters, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Gcra {
    /// `T`: the emission interval.
    interval: u64,
    /// `τ`: how far ahead of the schedule a burst may run.
    tolerance: u64,
}

/// A conforming call: the key's new TAT, and what is left of its allowance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Conforming {
    pub(super) tat: u64,
    /// Further calls that would conform at the same instant.
    pub(super) remaining: u64,
    /// Nanoseconds until the key has fully recovered (`tat − t`).
    pub(super) reset: u64,
}

impl Gcra {
    pub(super) fn new(interval: u64, burst: u64) -> Self {
        Self {
            interval,
            tolerance: burst.saturating_sub(1).saturating_mul(interval),
        }
    }

    /// The decision for a call at `now` on a key whose TAT is `tat` (`None`:
    /// no state). `Err` carries the earliest time the call would conform.
    pub(super) fn check(&self, tat: Option<u64>, now: u64) -> Result<Conforming, u64> {
        let tat = tat.map_or(now, |tat| tat.max(now));
        let allowed_at = tat.saturating_sub(self.tolerance);
        if now < allowed_at {
            return Err(allowed_at);
        }
        let tat = tat.saturating_add(self.interval);
        Ok(Conforming {
            tat,
            remaining: self.remaining(tat, now),
            reset: tat - now,
        })
    }

    /// Reserves the first conforming time at or after `now`, if that is at
    /// most `max_wait` away: the key's new TAT and the time to proceed.
    pub(super) fn reserve(
        &self,
        tat: Option<u64>,
        now: u64,
        max_wait: u64,
    ) -> Result<(u64, u64), u64> {
        let tat = tat.map_or(now, |tat| tat.max(now));
        let at = tat.saturating_sub(self.tolerance).max(now);
        if at - now > max_wait {
            return Err(at);
        }
        Ok((tat.saturating_add(self.interval), at))
    }

    /// Undoes one reservation that will not be used: the TAT moves back by `T`.
    pub(super) fn refund(&self, tat: u64) -> u64 {
        tat.saturating_sub(self.interval)
    }

    /// Further calls that conform at `now` once the TAT is `tat`: `k` calls
    /// conform while `tat + (k − 1) · T − τ ≤ now`.
    fn remaining(&self, tat: u64, now: u64) -> u64 {
        match (now.saturating_add(self.tolerance)).checked_sub(tat) {
            Some(slack) => slack / self.interval.max(1) + 1,
            None => 0,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn a_fresh_key_gets_its_burst_then_one_call_per_interval() {
        // 10 per second, burst 3.
        let gcra = Gcra::new(100 * MS, 3);
        let mut tat = None;
        let mut remaining = Vec::new();
        for _ in 0..3 {
            let ok = gcra.check(tat, 0).unwrap();
            tat = Some(ok.tat);
            remaining.push(ok.remaining);
        }
        assert_eq!(remaining, [2, 1, 0]);
        assert_eq!(tat, Some(300 * MS));
        // The fourth call at t = 0 would conform at TAT − τ = 300 − 200 ms.
        assert_eq!(gcra.check(tat, 0), Err(100 * MS));
        assert_eq!(gcra.check(tat, 100 * MS - 1), Err(100 * MS));
        let ok = gcra.check(tat, 100 * MS).unwrap();
        assert_eq!((ok.tat, ok.remaining, ok.reset), (400 * MS, 0, 300 * MS));
    }

    #[test]
    fn a_recovered_state_answers_as_no_state() {
        let gcra = Gcra::new(100 * MS, 3);
        for now in [300 * MS, 450 * MS, 10_000 * MS] {
            assert_eq!(gcra.check(Some(300 * MS), now), gcra.check(None, now));
        }
    }

    #[test]
    fn a_reservation_waits_for_the_first_conforming_time_and_a_refund_undoes_it() {
        let gcra = Gcra::new(100 * MS, 1);
        let first = gcra.check(None, 0).unwrap().tat;
        assert_eq!(gcra.reserve(Some(first), 0, 50 * MS), Err(100 * MS));
        let (tat, at) = gcra.reserve(Some(first), 0, 100 * MS).unwrap();
        assert_eq!((tat, at), (200 * MS, 100 * MS));
        assert_eq!(gcra.refund(tat), first);
    }
}
