//! [`PerCriticality`]: one value per [`Criticality`], indexed by it.

use crate::criticality::Criticality;
use core::ops::{Index, IndexMut};

/// One `T` per [`Criticality`], indexed by the criticality itself, so that
/// no table is ever read by a position that could mean two orders.
///
/// ```
/// use edgeshed::admission::{Criticality, PerCriticality};
///
/// let mut admitted = PerCriticality::<u64>::default();
/// admitted[Criticality::Critical] += 2;
/// assert_eq!(admitted[Criticality::Critical], 2);
/// // Iterated from the most important down, as the queue serves them.
/// let order: Vec<_> = admitted.iter().map(|(criticality, _)| criticality).collect();
/// assert_eq!(order, Criticality::ALL);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PerCriticality<T> {
    sheddable: T,
    default: T,
    critical: T,
}

impl<T> PerCriticality<T> {
    /// A table with `f(criticality)` for each criticality.
    pub fn from_fn(mut f: impl FnMut(Criticality) -> T) -> Self {
        Self {
            sheddable: f(Criticality::Sheddable),
            default: f(Criticality::Default),
            critical: f(Criticality::Critical),
        }
    }

    /// Each criticality with its value, from the most important down.
    pub fn iter(&self) -> impl Iterator<Item = (Criticality, &T)> {
        Criticality::ALL
            .into_iter()
            .map(move |rank| (rank, &self[rank]))
    }

    /// A table of `f` applied to each value.
    pub fn map<U>(&self, mut f: impl FnMut(Criticality, &T) -> U) -> PerCriticality<U> {
        PerCriticality::from_fn(|rank| f(rank, &self[rank]))
    }
}

impl<T> Index<Criticality> for PerCriticality<T> {
    type Output = T;

    #[inline(always)]
    fn index(&self, rank: Criticality) -> &T {
        match rank {
            Criticality::Sheddable => &self.sheddable,
            Criticality::Default => &self.default,
            Criticality::Critical => &self.critical,
        }
    }
}

impl<T> IndexMut<Criticality> for PerCriticality<T> {
    #[inline(always)]
    fn index_mut(&mut self, rank: Criticality) -> &mut T {
        match rank {
            Criticality::Sheddable => &mut self.sheddable,
            Criticality::Default => &mut self.default,
            Criticality::Critical => &mut self.critical,
        }
    }
}
