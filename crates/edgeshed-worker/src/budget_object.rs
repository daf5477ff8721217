//! The lease table as a JavaScript class, for the `EdgeshedBudget` Durable
//! Object (`worker/budget.mjs`): the object is a thin JS shell (Durable
//! Object RPC methods cannot be written in Rust today) and every decision is
//! made here, by [`LeaseTable`].
//!
//! Numbers cross as JavaScript numbers: the shell validates them (integers
//! in range) before calling; times are `Date.now()` milliseconds.

use crate::budget::{
    Answer, BudgetSetting, DeployVersion, Grant, LeaseRequest, LeaseTable, LimitSetting,
};
use core::time::Duration;
use edgeshed::limit::adaptive::{AnyLimit, Bounds, WindowSummary};
use wasm_bindgen::prelude::*;

/// A millisecond count from JavaScript: negative and NaN become 0.
fn millis(value: f64) -> u64 {
    if value.is_finite() && value > 0.0 {
        value as u64
    } else {
        0
    }
}

/// A count from JavaScript (the shell checked the range): 0 if unusable.
fn count(value: f64) -> u32 {
    millis(value).min(u64::from(u32::MAX)) as u32
}

/// The report in `numbers` 5 to 11 (see [`BudgetTable::ask`]), if the core
/// takes it.
fn report(n: &dyn Fn(usize) -> f64) -> Option<WindowSummary> {
    let served = millis(n(5));
    let rtt = |i: usize| (served > 0).then(|| Duration::from_micros(millis(n(i))));
    WindowSummary::from_parts(
        served,
        millis(n(6)),
        Duration::from_micros(millis(n(7))),
        n(8),
        rtt(9),
        rtt(10),
        millis(n(11)) as usize,
    )
    .ok()
}

/// One origin's lease table ([`LeaseTable`]), owned by a Durable Object.
#[wasm_bindgen]
pub struct BudgetTable {
    table: LeaseTable,
    /// The last grant answered at once (its details, read by the shell).
    last: Option<Grant>,
}

#[wasm_bindgen]
impl BudgetTable {
    /// A table for `limit` permits and leases of `ttl_ms`, started at `now`;
    /// no lease of an earlier table outlives `horizon`, so it is in learning
    /// mode until the earlier of `horizon` and one TTL from now
    /// ([`LeaseTable::resumed`]).
    #[wasm_bindgen(constructor)]
    pub fn new(limit: u32, ttl_ms: f64, now: f64, horizon: f64) -> BudgetTable {
        let (ttl, now, horizon) = (millis(ttl_ms), millis(now), millis(horizon));
        BudgetTable {
            table: LeaseTable::resumed(limit, ttl, now, horizon),
            last: None,
        }
    }

    /// The fleet limit now.
    pub fn limit(&self) -> u32 {
        self.table.limit()
    }

    /// The lease TTL in milliseconds.
    #[wasm_bindgen(js_name = ttlMs)]
    pub fn ttl_ms(&self) -> f64 {
        self.table.ttl_ms() as f64
    }

    /// A table whose limit the algorithm `name` moves within `[min, max]`
    /// from `initial` ([`LeaseTable::adaptive`]); `undefined` for a name or
    /// bounds the core refuses (the shell checked them).
    pub fn adaptive(
        name: &str,
        initial: u32,
        min: u32,
        max: u32,
        ttl_ms: f64,
        now: f64,
        horizon: f64,
    ) -> Option<BudgetTable> {
        let bounds = Bounds::new(initial as usize, min as usize, max as usize).ok()?;
        let algorithm = AnyLimit::named(name, bounds).ok()?;
        let (ttl, now, horizon) = (millis(ttl_ms), millis(now), millis(horizon));
        Some(BudgetTable {
            table: LeaseTable::adaptive(algorithm, ttl, now, horizon),
            last: None,
        })
    }

    /// A caller of the deploy version (`numbers[0]`, its timestamp in ms,
    /// and `version_id`) states its configuration ([`LeaseTable::configure`]):
    /// `algorithm` is `""` for a fixed limit; `numbers`: `[versionTimestampMs,
    /// limit, ttlMs, initialLimit, minLimit, maxLimit]` (the shell checked
    /// them). Returns 1 when the table's configuration changed (in place),
    /// 0 when not, -1 for an algorithm or bounds the core refuses.
    pub fn configure(
        &mut self,
        version_id: &str,
        algorithm: &str,
        numbers: &[f64],
        now: f64,
    ) -> i32 {
        let n = |i: usize| numbers.get(i).copied().unwrap_or(0.0);
        let limit = if algorithm.is_empty() {
            LimitSetting::Fixed(count(n(1)))
        } else {
            let (initial, min, max) = (count(n(3)), count(n(4)), count(n(5)));
            let Ok(bounds) = Bounds::new(initial as usize, min as usize, max as usize) else {
                return -1;
            };
            let Some(limit) = LimitSetting::adaptive(algorithm, bounds) else {
                return -1;
            };
            limit
        };
        let setting = BudgetSetting {
            limit,
            ttl_ms: millis(n(2)),
        };
        let version = DeployVersion::new(millis(n(0)), version_id);
        i32::from(self.table.configure(&version, &setting, millis(now)))
    }

    /// Grants, renews, grows or releases `holder`'s lease ([`LeaseTable::ask`]).
    /// `numbers`: `[held, inUse, wanted, waitMs, epoch, served, dropped,
    /// rttTotalUs, rttSquares (s²), minRttUs, maxRttUs, maxInFlight,
    /// callsMs]` (a report the core refuses counts as none; `callsMs`:
    /// [`LeaseRequest::calls_ms`], 0 or missing when unknown). Returns the permits the
    /// holder may use (the rest of the grant through [`BudgetTable::renew_ms`]
    /// and friends), or -1 when the ask is kept: its answer then comes from
    /// [`BudgetTable::answer_parked`].
    pub fn ask(&mut self, holder: &str, numbers: &[f64], now: f64) -> f64 {
        let n = |i: usize| numbers.get(i).copied().unwrap_or(0.0);
        let mut req = LeaseRequest::new(count(n(0)), count(n(1)), count(n(2)));
        req.wait_ms = millis(n(3));
        req.epoch = millis(n(4));
        req.report = report(&n).unwrap_or_default();
        req.calls_ms = millis(n(12));
        self.last = self.table.ask(holder, req, millis(now));
        self.last.map_or(-1.0, |grant| f64::from(grant.permits))
    }

    /// The epoch of the fleet limit (0 for a fixed one).
    pub fn epoch(&self) -> f64 {
        self.last.map_or(0.0, |grant| grant.epoch as f64)
    }

    /// When the holder of the last grant answered at once should call
    /// again, in ms from the request ([`Grant::renew_ms`]).
    #[wasm_bindgen(js_name = renewMs)]
    pub fn renew_ms(&self) -> f64 {
        self.last.map_or(0.0, |grant| grant.renew_ms as f64)
    }

    /// The TTL of the last grant answered at once ([`Grant::ttl_ms`]: at
    /// most [`BudgetTable::ttl_ms`]).
    #[wasm_bindgen(js_name = lastTtlMs)]
    pub fn last_ttl_ms(&self) -> f64 {
        self.last
            .map_or(self.table.ttl_ms() as f64, |grant| grant.ttl_ms as f64)
    }

    /// Whether the last grant answered at once was a learning-mode one.
    #[wasm_bindgen(js_name = lastLearning)]
    pub fn last_learning(&self) -> bool {
        self.last.is_some_and(|grant| grant.learning)
    }

    /// Whether the last grant answered at once said the budget contended.
    #[wasm_bindgen(js_name = lastContended)]
    pub fn last_contended(&self) -> bool {
        self.last.is_some_and(|grant| grant.contended)
    }

    /// `holder`'s watch ([`LeaseTable::watch`]): 1 or 0 (contended or not)
    /// when answered at once, -1 when kept.
    pub fn watch(&mut self, holder: &str, contended: bool, wait_ms: f64, now: f64) -> i32 {
        match self
            .table
            .watch(holder, contended, millis(wait_ms), millis(now))
        {
            Some(contended) => i32::from(contended),
            None => -1,
        }
    }

    /// The kept asks and watches answered now ([`LeaseTable::answer_parked`]):
    /// `[[0, holder, permits, renewMs, learning, contended, epoch, ttlMs] |
    /// [1, holder, contended], ...]`.
    #[wasm_bindgen(js_name = answerParked)]
    pub fn answer_parked(&mut self, now: f64) -> js_sys::Array {
        let out = js_sys::Array::new();
        for answer in self.table.answer_parked(millis(now)) {
            let entry = js_sys::Array::new();
            match answer {
                Answer::Lease(holder, grant) => {
                    entry.push(&0.into());
                    entry.push(&holder.into());
                    entry.push(&grant.permits.into());
                    entry.push(&(grant.renew_ms as f64).into());
                    entry.push(&grant.learning.into());
                    entry.push(&grant.contended.into());
                    entry.push(&(grant.epoch as f64).into());
                    entry.push(&(grant.ttl_ms as f64).into());
                }
                Answer::Notice(holder, contended) => {
                    entry.push(&1.into());
                    entry.push(&holder.into());
                    entry.push(&contended.into());
                }
            }
            out.push(&entry);
        }
        out
    }

    /// When the earliest kept ask or watch must be answered, or -1.
    #[wasm_bindgen(js_name = nextParkedAt)]
    pub fn next_parked_at(&self) -> f64 {
        self.table.next_parked_at().map_or(-1.0, |at| at as f64)
    }

    /// Whether the table is in learning mode at `now`.
    pub fn learning(&self, now: f64) -> bool {
        self.table.learning(millis(now))
    }

    /// Drops expired leases; the earliest expiry left, or -1 if none.
    pub fn expire(&mut self, now: f64) -> f64 {
        self.table.expire(millis(now)).map_or(-1.0, |at| at as f64)
    }

    /// Permits out under unexpired leases at `now`.
    pub fn leased(&mut self, now: f64) -> u32 {
        self.table.view(millis(now)).leased
    }

    /// Holders with at least one permit at `now`.
    pub fn holders(&mut self, now: f64) -> u32 {
        self.table.view(millis(now)).holders
    }
}
