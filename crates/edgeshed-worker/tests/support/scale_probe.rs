//! A once-a-second look at the table beside the holders (`scale_sim.rs`):
//! permits counted for isolates that are gone (stuck, once they are gone
//! longer than a lease can outlive them), and for live holders that do not
//! hold them.

use super::Sim;

impl Sim {
    /// Adds one sample to the report's `dead_leased` and `stranded` sums.
    pub(super) fn probe(&mut self) {
        let now = self.now;
        let mut table = self.object.table.clone();
        table.expire(now);
        let (mut dead, mut stranded, mut stuck) = (0u32, 0u32, 0u32);
        let outlived = self.sc.ttl + self.call_timeout() + self.cfg.patience_ms;
        for (id, permits) in table.leases() {
            let (slot, gen) = id.split_once('.').unwrap();
            let iso = &self.isolates[slot.parse::<usize>().unwrap()];
            if iso.gen != gen.parse::<u64>().unwrap() {
                dead += permits;
                if self.evicted.get(id).is_some_and(|&at| now > at + outlived) {
                    stuck += permits;
                }
            } else if !iso.holder.pending() {
                let lost = permits.saturating_sub(iso.holder.held(now).max(iso.holder.in_flight()));
                stranded += lost;
            }
        }
        let idle: u32 = self
            .isolates
            .iter()
            .map(|iso| iso.holder.held(now).saturating_sub(iso.holder.in_flight()))
            .sum();
        let (mut idle_lease, mut spare) = (0u32, 0u32);
        for iso in &self.isolates {
            let unused = iso.holder.held(now).saturating_sub(iso.holder.in_flight());
            if iso.holder.in_flight() == 0 {
                idle_lease += unused;
            } else {
                spare += unused;
            }
        }
        self.report.idle_lease += f64::from(idle_lease);
        self.report.spare += f64::from(spare);
        self.report.in_flight += f64::from(self.origin);
        self.report.free += f64::from(self.sc.budget.saturating_sub(table.view(now).leased));
        self.report.idle_held += f64::from(idle);
        self.report.dead_leased += f64::from(dead);
        self.report.stranded += f64::from(stranded);
        self.report.stuck = self.report.stuck.max(stuck);
        self.report.probes += 1;
        self.evicted.retain(|_, at| now <= *at + outlived);
    }
}
