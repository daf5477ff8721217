//! [`RateLimiter`]: a [`RateTable`] behind a lock, on an injected clock.

use super::reservation::Reservation;
use super::table::{Cell, RateTable, Refusal};
use super::Rate;
use crate::error::RateLimited;
use crate::sync::{lock, Arc, Mutex};
use crate::time::{Clock, Instant};
use crate::Key;
use core::fmt;
use core::hash::Hash;
use core::time::Duration;

/// A GCRA rate limit per key (one theoretical arrival time per key), on an
/// injected [`Clock`]: it runs wherever the clock does, wasm32 included
/// (tower's `RateLimit` reads tokio's clock, which panics there).
///
/// Calls without a key share one allowance. Clones share the state.
///
/// ```
/// use edgeshed::rate_limit::{Rate, RateLimiter};
/// use edgeshed::time::ManualClock;
/// use edgeshed::Key;
/// use std::time::Duration;
///
/// # fn main() -> Result<(), edgeshed::InvalidConfig> {
/// let clock = ManualClock::new();
/// let limiter = RateLimiter::new(Rate::per_second(10)?.with_burst(2)?, clock.clone());
/// let tenant = Key::from("tenant-7");
/// assert_eq!(limiter.check_key(&tenant).unwrap().remaining(), 1);
/// assert!(limiter.check_key(&tenant).is_ok());
/// let refused = limiter.check_key(&tenant).unwrap_err(); // the burst is spent
/// assert_eq!(refused.retry_after(), Some(Duration::from_millis(100)));
/// assert!(limiter.check_key(&Key::from("tenant-8")).is_ok()); // another key has its own
/// clock.advance(Duration::from_millis(100));
/// assert!(limiter.check_key(&tenant).is_ok());
/// # Ok(())
/// # }
/// ```
pub struct RateLimiter<C, K = Key> {
    shared: Arc<Shared<K>>,
    clock: C,
}

struct Shared<K> {
    rate: Rate,
    /// The table and its counters: counted under the lock the check takes
    /// anyway (an atomic counter beside it cost 20 % of a check).
    table: Mutex<Counted<K>>,
}

struct Counted<K> {
    table: RateTable<K>,
    stats: RateStats,
}

/// What is left of a key's allowance after an allowed call: what the
/// `RateLimit` header (draft-ietf-httpapi-ratelimit-headers) reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allowance {
    remaining: u64,
    reset: Duration,
}

impl Allowance {
    /// Further calls the key may make right now (`r`).
    pub const fn remaining(&self) -> u64 {
        self.remaining
    }

    /// How long until the key's allowance is whole again (`t`).
    pub const fn reset(&self) -> Duration {
        self.reset
    }
}

/// A rate limit's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RateStats {
    /// Calls allowed.
    pub allowed: u64,
    /// Calls refused (over their rate, or new keys refused below), all 429s.
    pub limited: u64,
    /// Calls of keys the table could not track (every tracked key was still
    /// limited), decided by the one overflow allowance they share: allowed
    /// or refused (those refused also count in `limited` and `keys_refused`).
    pub overflow: u64,
    /// Calls of new keys refused by the overflow allowance: by the shared
    /// allowance while the table was full, or by its state, which a key
    /// entering the table starts from while it is still limited (see
    /// [`Rate::with_max_keys`]). Also counted in `limited`.
    pub keys_refused: u64,
    /// Keys tracked right now.
    pub keys: usize,
}

impl<C: Clock, K: Hash + Eq + Clone> RateLimiter<C, K> {
    /// A rate limit of `rate`, timed by `clock`.
    pub fn new(rate: Rate, clock: C) -> Self {
        Self {
            shared: Arc::new(Shared {
                rate,
                table: Mutex::new(Counted {
                    table: RateTable::new(&rate),
                    stats: RateStats::default(),
                }),
            }),
            clock,
        }
    }

    /// Allows (and counts) a call of `key` now, or refuses it with
    /// [`RateLimited`] (reason `rate`, `retry_after` until it would be allowed).
    #[inline]
    pub fn check_key(&self, key: &K) -> Result<Allowance, RateLimited> {
        self.check_at(Some(key), self.clock.now())
    }

    /// [`check_key`](Self::check_key) for a call without a key: the unkeyed
    /// calls share one allowance.
    pub fn check(&self) -> Result<Allowance, RateLimited> {
        self.check_at(None, self.clock.now())
    }

    /// [`check_key`](Self::check_key) or [`check`](Self::check), at `now`.
    pub fn check_at(&self, key: Option<&K>, now: Instant) -> Result<Allowance, RateLimited> {
        let now = nanos(now);
        let mut counted = lock(&self.shared.table);
        match counted.table.check(key, now) {
            Ok((ok, cell)) => {
                counted.allowed(cell);
                Ok(Allowance {
                    remaining: ok.remaining,
                    reset: Duration::from_nanos(ok.reset),
                })
            }
            Err(refusal) => Err(counted.refused(refusal, now)),
        }
    }

    /// Reserves the first moment, at most `max_wait` from now, at which a
    /// call of `key` is allowed ([`Reservation::at`]); or refuses at once if
    /// that moment is further away. A reservation not used must be given
    /// back with [`refund`](Self::refund).
    ///
    /// ```
    /// use edgeshed::rate_limit::{Rate, RateLimiter};
    /// use edgeshed::time::{Clock, ManualClock};
    /// use edgeshed::Key;
    /// use std::time::Duration;
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let clock = ManualClock::new();
    /// let limiter = RateLimiter::new(Rate::per_second(10)?.with_burst(1)?, clock.clone());
    /// let key = Key::from("k");
    /// let now = limiter.reserve(Some(&key), Duration::ZERO)?;
    /// assert_eq!(now.at(), clock.now()); // allowed at once
    /// let later = limiter.reserve(Some(&key), Duration::from_millis(100))?;
    /// assert_eq!(later.at(), clock.now() + Duration::from_millis(100));
    /// limiter.refund(later); // its call was cancelled: the turn is free again
    /// assert!(limiter.reserve(Some(&key), Duration::from_millis(100)).is_ok());
    /// # Ok(())
    /// # }
    /// ```
    pub fn reserve(
        &self,
        key: Option<&K>,
        max_wait: Duration,
    ) -> Result<Reservation<K>, RateLimited> {
        let now = nanos(self.clock.now());
        let max_wait = u64::try_from(max_wait.as_nanos()).unwrap_or(u64::MAX);
        let mut counted = lock(&self.shared.table);
        match counted.table.reserve(key, now, max_wait) {
            Ok((at, cell)) => {
                counted.allowed(cell);
                Ok(Reservation {
                    at: Instant::from_origin(Duration::from_nanos(at)),
                    key: key.cloned(),
                    cell,
                })
            }
            Err(refusal) => Err(counted.refused(refusal, now)),
        }
    }

    /// Gives back a reservation that will not be used (its call was
    /// cancelled while it waited), so the allowance is not lost: to the
    /// allowance that granted it, never to a later entry of its key.
    pub fn refund(&self, reservation: Reservation<K>) {
        let mut counted = lock(&self.shared.table);
        counted
            .table
            .refund(reservation.key.as_ref(), reservation.cell);
        let stats = &mut counted.stats;
        stats.allowed = stats.allowed.saturating_sub(1);
        if reservation.cell == Cell::Overflow {
            stats.overflow = stats.overflow.saturating_sub(1);
        }
    }

    /// The configuration.
    pub fn rate(&self) -> Rate {
        self.shared.rate
    }

    /// The counters, and the keys tracked now.
    pub fn stats(&self) -> RateStats {
        let counted = lock(&self.shared.table);
        RateStats {
            keys: counted.table.keys(),
            ..counted.stats
        }
    }

    /// The clock the limit is timed by.
    pub fn clock(&self) -> &C {
        &self.clock
    }
}

impl<K: Hash + Eq + Clone> Counted<K> {
    fn allowed(&mut self, cell: Cell) {
        self.stats.allowed += 1;
        if cell == Cell::Overflow {
            self.stats.overflow += 1;
        }
    }

    fn refused(&mut self, refusal: Refusal, now: u64) -> RateLimited {
        self.stats.limited += 1;
        let at = match refusal {
            Refusal::OverRate(at) => at,
            Refusal::Overflow(at) => {
                self.stats.overflow += 1;
                self.stats.keys_refused += 1;
                at
            }
            Refusal::Inherited(at) => {
                self.stats.keys_refused += 1;
                at
            }
        };
        RateLimited::rate(Duration::from_nanos(at.saturating_sub(now)))
    }
}

/// An instant as nanoseconds since its clock's origin (saturating; 584 years).
fn nanos(at: Instant) -> u64 {
    u64::try_from(at.since_origin().as_nanos()).unwrap_or(u64::MAX)
}

impl<C: Clone, K> Clone for RateLimiter<C, K> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
            clock: self.clock.clone(),
        }
    }
}

impl<C, K> fmt::Debug for RateLimiter<C, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimiter")
            .field("rate", &self.shared.rate)
            .finish_non_exhaustive()
    }
}
