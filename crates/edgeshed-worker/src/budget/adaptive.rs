//! The lease table with an adaptive fleet limit: reports in, limit out.

use super::fleet_limit::FleetLimit;
use super::table::LeaseTable;
use super::types::LeaseRequest;
use edgeshed::limit::adaptive::AnyLimit;

impl LeaseTable {
    /// A table whose limit `algorithm` moves ([`FleetLimit`]), started at
    /// `now` like [`LeaseTable::resumed`] (learning until `horizon`, at
    /// most one TTL).
    pub fn adaptive(algorithm: AnyLimit, ttl_ms: u64, now: u64, horizon: u64) -> Self {
        let configured = super::setting::LimitSetting::of(&algorithm);
        let fleet = FleetLimit::new(algorithm, now);
        let mut table = Self::resumed(fleet.limit(), ttl_ms, now, horizon);
        table.fleet = Some(fleet);
        table.configured = configured;
        table
    }

    /// The adaptive fleet limit, if the table has one.
    pub fn fleet_limit(&self) -> Option<&FleetLimit> {
        self.fleet.as_ref()
    }

    /// How often a holder reports while the limit adapts: a twentieth of
    /// the TTL (each report is a lease call).
    pub(super) fn report_ms(&self) -> u64 {
        (self.ttl_ms() / 20).max(1)
    }

    /// Takes `holder`'s report and the fleet's calls in flight into the
    /// adaptive limit, which may move it.
    pub(super) fn learn(&mut self, holder: &str, req: &LeaseRequest, now: u64) {
        let Some(fleet) = self.fleet.as_mut() else {
            return;
        };
        let others: u32 = self
            .leases
            .iter()
            .filter(|(id, _)| id.as_str() != holder)
            .fold(0u32, |sum, (_, lease)| sum.saturating_add(lease.in_use));
        fleet.in_use(others.saturating_add(req.in_use), now);
        if fleet.record(&req.report, req.epoch, now) {
            self.limit = fleet.limit();
        }
    }
}
