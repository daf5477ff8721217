//! A budget's configuration as a caller states it, and the deploy version
//! that says which of two configurations is the newer.
//!
//! Every isolate states its origin's budget (`maxInFlight` or `adaptive`,
//! `leaseTtlMs`) with each call to the object, tagged with the version of
//! the Worker it runs ([`DeployVersion`], from Cloudflare's version
//! metadata binding). During a gradual deployment two versions serve at
//! once; the table applies the newest configuration in place and serves
//! older versions' calls under it ([`LeaseTable::configure`]).
//!
//! [`LeaseTable::configure`]: super::LeaseTable::configure

use edgeshed::limit::adaptive::{AnyLimit, Bounds, Limit};

/// How the fleet limit is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitSetting {
    /// `budget.maxInFlight`: a fixed fleet limit.
    Fixed(u32),
    /// `budget.adaptive`: the algorithm (one of [`AnyLimit::NAMES`]) and its
    /// bounds; the object runs it over the holders' reports.
    Adaptive {
        /// The algorithm's configuration name.
        algorithm: &'static str,
        /// Its initial, minimum and maximum limit.
        bounds: Bounds,
    },
}

impl LimitSetting {
    /// An adaptive setting for the algorithm `name`; `None` for a name the
    /// core does not know.
    pub fn adaptive(name: &str, bounds: Bounds) -> Option<Self> {
        let algorithm = AnyLimit::NAMES.into_iter().find(|known| *known == name)?;
        Some(Self::Adaptive { algorithm, bounds })
    }

    /// The setting of an algorithm already built.
    pub fn of(algorithm: &AnyLimit) -> Self {
        Self::Adaptive {
            algorithm: algorithm.name(),
            bounds: algorithm.bounds(),
        }
    }
}

/// One budget's configuration: what an isolate states with every call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetSetting {
    /// The fleet limit, fixed or adaptive.
    pub limit: LimitSetting,
    /// `budget.leaseTtlMs`.
    pub ttl_ms: u64,
}

impl BudgetSetting {
    /// A fixed limit of `limit` permits with leases of `ttl_ms`.
    pub fn fixed(limit: u32, ttl_ms: u64) -> Self {
        Self {
            limit: LimitSetting::Fixed(limit),
            ttl_ms,
        }
    }
}

/// The version of the Worker a caller runs: the `timestamp` (ms) and `id` of
/// Cloudflare's version metadata binding (`CF_VERSION_METADATA`). Versions
/// are ordered by timestamp, then id; a caller without the binding states
/// [`DeployVersion::UNVERSIONED`], older than every version.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct DeployVersion {
    /// When the version was created (ms since the epoch; 0: unknown).
    pub timestamp_ms: u64,
    /// The version's id (empty: unknown).
    pub id: String,
}

impl DeployVersion {
    /// No version stated.
    pub const UNVERSIONED: DeployVersion = DeployVersion {
        timestamp_ms: 0,
        id: String::new(),
    };

    /// The version created at `timestamp_ms` with `id`.
    pub fn new(timestamp_ms: u64, id: &str) -> Self {
        Self {
            timestamp_ms,
            id: id.to_owned(),
        }
    }
}
