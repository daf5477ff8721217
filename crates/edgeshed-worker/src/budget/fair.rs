//! The fairness rule: max-min fair shares by water-filling.

/// The share of `limit` that the demand at `index` gets when `demands` (one
/// entry per holder) compete for it, max-min fairly.
///
/// Holders are served from the smallest demand up (ties by position); each
/// gets its demand or an even split of what is left, rounded up, whichever
/// is smaller. So a holder that wants little gets all of it, the others
/// split the rest within one permit of each other, the shares never sum to
/// more than `limit`, and none is left idle while a holder wants more. When
/// demand is contended no holder gets more than `ceil(limit / holders)`.
/// An `index` out of range gets 0.
pub fn fair_share(limit: u32, demands: &[u32], index: usize) -> u32 {
    let mut order: Vec<usize> = (0..demands.len()).collect();
    order.sort_by_key(|&i| (demands.get(i).copied().unwrap_or(0), i));
    let mut remaining = limit;
    let mut left = u32::try_from(order.len()).unwrap_or(u32::MAX);
    for i in order {
        let demand = demands.get(i).copied().unwrap_or(0);
        let even = remaining.div_ceil(left.max(1));
        let share = demand.min(even);
        if i == index {
            return share;
        }
        remaining -= share;
        left = left.saturating_sub(1);
    }
    0
}
