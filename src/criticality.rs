//! How much a call matters: [`Criticality`], and the part of the limit a
//! limiter keeps for the more important ones ([`Reserve`]).

use crate::error::{InvalidConfig, Parameter};
use core::fmt;
use core::str::FromStr;

/// How much a call matters when the limiter is full: the SRE book's
/// `CRITICAL_PLUS`, `CRITICAL` and `SHEDDABLE`.
///
/// Ordered from the least to the most important (`Sheddable < Default <
/// Critical`). Under overload a call is refused only when every call of a
/// lower criticality would be refused too: a limiter keeps part of its limit
/// for the higher criticalities (see [`Reserve`]), and its queue serves the
/// higher criticalities first.
///
/// ```
/// use edgeshed::admission::Criticality;
///
/// let route = Criticality::Default;
/// // A request may lower its criticality, never raise it above its route's.
/// let asked: Criticality = "critical".parse().unwrap();
/// assert_eq!(route.lowered_to(asked), Criticality::Default);
/// assert_eq!(route.lowered_to(Criticality::Sheddable).as_str(), "sheddable");
/// assert!("urgent".parse::<Criticality>().is_err());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Criticality {
    /// Batch work, prefetches, beacons: the first to be shed.
    Sheddable,
    /// Ordinary traffic (what a call without a criticality is).
    #[default]
    Default,
    /// The traffic that must get through (checkout, login): shed last.
    Critical,
}

impl Criticality {
    /// Every criticality, from the most important down (the order the queue
    /// serves them in).
    pub const ALL: [Criticality; 3] = [Self::Critical, Self::Default, Self::Sheddable];

    /// The name used in configuration, headers and stats:
    /// `"critical"`, `"default"` or `"sheddable"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Critical => "critical",
            Self::Default => "default",
            Self::Sheddable => "sheddable",
        }
    }

    /// The lower of `self` and `asked`: what a request that asks for `asked`
    /// gets when `self` is the most it may have (a route's criticality).
    pub fn lowered_to(self, asked: Criticality) -> Criticality {
        self.min(asked)
    }
}

impl fmt::Display for Criticality {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A criticality name that is none of `critical`, `default`, `sheddable`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownCriticality(pub String);

impl fmt::Display for UnknownCriticality {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown criticality {:?}: expected \"critical\", \"default\" or \"sheddable\"",
            self.0
        )
    }
}

impl std::error::Error for UnknownCriticality {}

impl FromStr for Criticality {
    type Err = UnknownCriticality;

    /// Parses the exact lower-case names of [`as_str`](Criticality::as_str).
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "critical" => Ok(Self::Critical),
            "default" => Ok(Self::Default),
            "sheddable" => Ok(Self::Sheddable),
            other => Err(UnknownCriticality(other.to_owned())),
        }
    }
}

/// Parts per million: the reserve fractions are kept as integers so that the
/// ceilings are exact (`10 × 0.7` is 7, not 6.999…).
const MILLION: u64 = 1_000_000;

/// The part of the current limit a limiter keeps for higher criticalities,
/// as fractions of the limit: `critical` is kept free of default and
/// sheddable calls, `default` is kept free of sheddable calls on top of it.
///
/// The ceilings, for a limit `n`: sheddable calls are admitted while fewer
/// than `max(1, floor(n × (1 − critical − default)))` calls are in flight,
/// default calls while fewer than `max(1, floor(n × (1 − critical)))` are,
/// critical calls up to `n`; when `n ≥ 2` at least one slot always stays for
/// critical calls. The ceilings follow the current limit, so they compose
/// with adaptive limits.
///
/// ```
/// use edgeshed::admission::{Criticality, Reserve};
///
/// let reserve = Reserve::default(); // critical 0.1, default 0.2
/// let ceilings = |n| Criticality::ALL.map(|c| reserve.ceiling(n, c));
/// assert_eq!(ceilings(10), [10, 9, 7]); // critical, default, sheddable
/// assert_eq!(ceilings(3), [3, 2, 2]);
/// assert_eq!(ceilings(2), [2, 1, 1]);
/// assert_eq!(ceilings(1), [1, 1, 1]); // any call may take the one slot
/// assert_eq!(Reserve::NONE.ceiling(10, Criticality::Sheddable), 10);
/// assert!(Reserve::new(0.5, 0.6).is_err()); // more than the whole limit
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reserve {
    /// Kept for critical calls, in parts per million of the limit.
    critical: u32,
    /// Kept for default (and critical) calls on top of `critical`.
    default: u32,
}

impl Reserve {
    /// No reserve: every call may use the whole limit (the queue still serves
    /// higher criticalities first). What a limiter has unless told otherwise.
    pub const NONE: Reserve = Reserve {
        critical: 0,
        default: 0,
    };

    /// The contract's default reserve (what [`Reserve::default`] is): 0.1
    /// of the limit for critical calls, 0.2 more for default calls.
    pub const DEFAULT: Reserve = Reserve {
        critical: 100_000,
        default: 200_000,
    };

    /// Keeps `critical` (a fraction of the limit) for critical calls and
    /// `default` more for default calls. Each must lie in `[0, 1]` and their
    /// sum must not exceed 1; otherwise [`InvalidConfig`] names
    /// `reserve.critical` or `reserve.default`.
    pub fn new(critical: f64, default: f64) -> Result<Self, InvalidConfig> {
        let critical = parts_per_million(critical, Parameter::ReserveCritical)?;
        let default = parts_per_million(default, Parameter::ReserveDefault)?;
        if u64::from(critical) + u64::from(default) > MILLION {
            return Err(InvalidConfig::new(Parameter::ReserveDefault));
        }
        Ok(Self { critical, default })
    }

    /// The fraction kept for critical calls.
    pub const fn critical(&self) -> f64 {
        self.critical as f64 / 1e6
    }

    /// The fraction kept for default calls on top of [`critical`](Self::critical).
    pub const fn default_share(&self) -> f64 {
        self.default as f64 / 1e6
    }

    /// How many calls may be in flight, at most, when a call of
    /// `criticality` is admitted under a limit of `limit`.
    pub fn ceiling(&self, limit: usize, criticality: Criticality) -> usize {
        if *self == Self::NONE || limit <= 1 {
            return limit;
        }
        let kept = match criticality {
            Criticality::Critical => return limit,
            Criticality::Default => u64::from(self.critical),
            Criticality::Sheddable => u64::from(self.critical) + u64::from(self.default),
        };
        // Exact in u64 (both products stay below 10^12 · 2^44): 128-bit
        // division would pull compiler-builtins' u128_div_rem (1 KiB) into
        // the wasm packages.
        let wide = limit as u64;
        let (whole, part) = (wide / MILLION, wide % MILLION);
        let share = whole * (MILLION - kept) + part * (MILLION - kept) / MILLION;
        // At least one slot for any call; at least one kept for critical ones.
        (share as usize).clamp(1, limit - 1)
    }

    /// How many free slots a call of `criticality` must leave free: the
    /// limit minus its ceiling.
    pub(crate) fn keep(&self, limit: usize, criticality: Criticality) -> usize {
        limit - self.ceiling(limit, criticality)
    }
}

impl Default for Reserve {
    /// The contract's defaults: 0.1 of the limit for critical calls, 0.2 more
    /// for default calls.
    fn default() -> Self {
        Self::DEFAULT
    }
}

fn parts_per_million(fraction: f64, parameter: Parameter) -> Result<u32, InvalidConfig> {
    if !(0.0..=1.0).contains(&fraction) {
        // Also refuses NaN.
        return Err(InvalidConfig::new(parameter));
    }
    // In [0, 1e6]: the cast is exact after rounding.
    Ok((fraction * 1e6).round() as u32)
}
