//! [`Rate`]: how many calls per period, with what burst, over how many keys.

use crate::error::{InvalidConfig, Parameter};
use core::time::Duration;

/// A rate limit's configuration: `count` calls per `period` on average,
/// bursts of up to `burst` calls at once, per key, over at most `max_keys`
/// keys at a time.
///
/// ```
/// use edgeshed::rate_limit::Rate;
/// use std::time::Duration;
///
/// # fn main() -> Result<(), edgeshed::InvalidConfig> {
/// let rate = Rate::per_second(10)?.with_burst(20)?;
/// assert_eq!(rate.interval(), Duration::from_millis(100)); // one call every 100 ms
/// assert_eq!((rate.burst(), rate.max_keys()), (20, 10_000));
/// assert_eq!(Rate::per_minute(30)?.burst(), 30); // the burst defaults to one period's calls
/// assert!(Rate::per_second(0).is_err());
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rate {
    count: u64,
    period: Duration,
    /// Nanoseconds between two calls at the sustained rate (rounded up, so
    /// the limit never allows more than configured).
    interval: u64,
    burst: u64,
    max_keys: usize,
}

impl Rate {
    /// The default of [`max_keys`](Self::max_keys).
    pub const DEFAULT_MAX_KEYS: usize = 10_000;

    /// `count` calls per second (1 to 10^9), burst `count`.
    pub fn per_second(count: u64) -> Result<Self, InvalidConfig> {
        Self::per(count, Duration::from_secs(1))
    }

    /// `count` calls per minute (1 to 6 × 10^10), burst `count`.
    pub fn per_minute(count: u64) -> Result<Self, InvalidConfig> {
        Self::per(count, Duration::from_secs(60))
    }

    fn per(count: u64, period: Duration) -> Result<Self, InvalidConfig> {
        let nanos = u64::try_from(period.as_nanos()).unwrap_or(u64::MAX);
        if count == 0 || count > nanos {
            return Err(InvalidConfig::new(Parameter::Rate));
        }
        Ok(Self {
            count,
            period,
            interval: nanos.div_ceil(count),
            burst: count,
            max_keys: Self::DEFAULT_MAX_KEYS,
        })
    }

    /// Allows bursts of up to `burst` calls at once (at least 1). A key
    /// that has been quiet long enough may make `burst` calls back to back;
    /// after that, one per [`interval`](Self::interval).
    pub fn with_burst(self, burst: u64) -> Result<Self, InvalidConfig> {
        if burst == 0 {
            return Err(InvalidConfig::new(Parameter::Burst));
        }
        Ok(Self { burst, ..self })
    }

    /// Tracks at most `max_keys` keys at once (at least 1; default 10,000).
    /// A key whose state has fully recovered is dropped when room is needed
    /// (that loses nothing: its state equals no state); a key still limited
    /// never is, so churn never hands it a fresh allowance. When every
    /// tracked key is still limited, new keys share one overflow allowance
    /// (this rate and burst), and a key entering the table while that one
    /// is still limited starts from its state: a new key is neither locked
    /// out nor given a fresh allowance that skips its overflow calls.
    /// Keys already tracked are never affected by the overflow.
    pub fn with_max_keys(self, max_keys: usize) -> Result<Self, InvalidConfig> {
        if max_keys == 0 {
            return Err(InvalidConfig::new(Parameter::MaxKeys));
        }
        Ok(Self { max_keys, ..self })
    }

    /// Calls per period at the sustained rate.
    pub const fn count(&self) -> u64 {
        self.count
    }

    /// The period `count` is given for (1 s or 60 s).
    pub const fn period(&self) -> Duration {
        self.period
    }

    /// The time between two calls at the sustained rate: GCRA's emission
    /// interval `T = period / count`.
    pub const fn interval(&self) -> Duration {
        Duration::from_nanos(self.interval)
    }

    /// The largest burst.
    pub const fn burst(&self) -> u64 {
        self.burst
    }

    /// The most keys tracked at once.
    pub const fn max_keys(&self) -> usize {
        self.max_keys
    }

    pub(super) const fn interval_nanos(&self) -> u64 {
        self.interval
    }
}
