//! Reconfiguration in place: a changed `maxInFlight`, `adaptive` or
//! `leaseTtlMs` is applied to the table the object holds. Its leases, the
//! calls it keeps and its learning state stay as they are: a table that
//! knows its leases never re-enters learning mode for a new configuration.
//!
//! # Which configuration is in force
//!
//! Every call states its isolate's configuration and deploy version
//! ([`DeployVersion`]). During a gradual deployment two versions serve at
//! once, so the calls alternate configurations; [`LeaseTable::configure`]
//! keeps one:
//! - a caller of a **newer** version than the one in force: its
//!   configuration is applied at once;
//! - a caller of the version in force with its configuration: nothing
//!   changes (the version was seen now);
//! - any other caller (an **older** version, or an equal one with another
//!   configuration, as when no isolate has the version binding) is served
//!   under the configuration in force, which is replaced only once no
//!   caller has stated it for one TTL (that version is gone: a rollback, or
//!   the end of an unversioned rollout). Every holder of a live lease calls
//!   within a TTL, so a version still serving keeps its configuration.
//!
//! # Why the origin still never sees more than the budget
//!
//! Part 1 of the argument in `budget/mod.rs` ("the table never leases more
//! than `L`") becomes, with `L` moving (a reconfiguration, or the adaptive
//! fleet limit):
//!
//! - **A grant never raises the sum above the limit in force.** A grant is
//!   at most `room`: the limit now minus what every other lease holds
//!   (0 when they hold the limit or more). So after any request the sum of
//!   the leases the table counts is at most max(the limit now, the sum
//!   before).
//! - **The table counts every call in flight** (a fixed limit). Outside
//!   learning mode a lease is never counted below the calls its holder
//!   reported in use (`LeaseTable::request`), even when the limit fell under
//!   the sum; a holder admits only within what the table counts for it
//!   (part 2). So the origin sees at most the sum the table counts. (Were a
//!   trimmed lease counted at the room left instead, a limit lowered from 12
//!   to 4 and raised to 12 again would grant the calls still in flight a
//!   second time: 18 calls at the origin in
//!   `tests/budget_reconfigure.rs`.) An adaptive limit still counts a
//!   trimmed lease at most at the room left, as before this rule: it moves
//!   every window and is an estimate, and counting the calls in flight
//!   there cost goodput (0.96 -> 0.81 in `tests/budget_adaptive.rs`); so
//!   under an adaptive limit that falls and rises again quickly the origin
//!   can briefly see more than the highest limit.
//! - **A raised limit** is room at once: kept asks are served when the
//!   shell next calls [`LeaseTable::answer_parked`].
//! - **A lowered limit** recalls nothing: holders over it keep what they
//!   have in use, are told to call again within a tenth of the TTL (they
//!   are trimmed then, to their share, never below their calls in flight),
//!   and nobody is granted anything until the sum is under the new limit.
//!   So the origin sees at most the old limit while the calls admitted
//!   under it finish (within the origin's `timeoutMs`, or one TTL for a
//!   holder that stopped calling), and at most the new one after.
//! - **A changed TTL** applies to the leases granted from then on; a lease
//!   keeps the expiry it was granted with, and the holder counts every lease
//!   with the TTL its answer carried (part 2 holds: its copy expires no
//!   later than the table's). The object's stored horizon covers the longer
//!   leases as soon as one is granted (it is written when a grant would
//!   pass it), so a restart still learns until every lease has expired
//!   (part 3).
//!
//! During a rollout from a limit of 8 to 12, the origin therefore sees at
//! most 12, and at most 8 once the older version has stopped calling for a
//! TTL after a rollback.

use super::LeaseTable;
use crate::budget::setting::{BudgetSetting, DeployVersion, LimitSetting};
use crate::budget::FleetLimit;
use edgeshed::limit::adaptive::AnyLimit;

impl LeaseTable {
    /// The configuration in force.
    pub fn setting(&self) -> BudgetSetting {
        BudgetSetting {
            limit: self.configured,
            ttl_ms: self.ttl_ms,
        }
    }

    /// The deploy version whose configuration is in force.
    pub fn version(&self) -> &DeployVersion {
        &self.version
    }

    /// A caller of `version` states `setting` at `now`: applies it in place
    /// if it wins (see the module's rules), and returns whether the table's
    /// configuration changed. Call it before handling the caller's request,
    /// and [`LeaseTable::answer_parked`] after (a raised limit may serve
    /// kept asks).
    pub fn configure(
        &mut self,
        version: &DeployVersion,
        setting: &BudgetSetting,
        now: u64,
    ) -> bool {
        let in_force = *version == self.version && *setting == self.setting();
        if in_force {
            self.version_seen_at = self.version_seen_at.max(now);
            return false;
        }
        let newer = *version > self.version;
        let gone = now >= self.version_seen_at.saturating_add(self.ttl_ms);
        if !newer && !gone {
            return false;
        }
        self.version = version.clone();
        self.version_seen_at = now;
        self.reconfigure(setting, now)
    }

    /// Applies `setting` in place at `now`, whatever the version: a new
    /// fixed limit or TTL as it is; an adaptive limit that was not in force
    /// (switched on, or another algorithm or bounds) starts as a new table's
    /// would (its first window a drain at the minimum), numbering its epochs
    /// after the old one's. Leases, kept calls and learning mode stay.
    /// Returns whether anything changed.
    pub fn reconfigure(&mut self, setting: &BudgetSetting, now: u64) -> bool {
        if *setting == self.setting() {
            return false;
        }
        self.ttl_ms = setting.ttl_ms;
        if setting.limit == self.configured {
            return true;
        }
        match setting.limit {
            LimitSetting::Fixed(limit) => {
                self.fleet = None;
                self.limit = limit;
            }
            LimitSetting::Adaptive { algorithm, bounds } => {
                // The setting names a known algorithm (`LimitSetting::adaptive`).
                let Ok(algorithm) = AnyLimit::named(algorithm, bounds) else {
                    return true;
                };
                let epoch = self.fleet.as_ref().map_or(0, FleetLimit::epoch);
                let fleet = FleetLimit::new(algorithm, now).after_epoch(epoch);
                self.limit = fleet.limit();
                self.fleet = Some(fleet);
            }
        }
        self.configured = setting.limit;
        true
    }
}
