//! Where a [`LoadShed`](super::LoadShed) counts its rejections.

use crate::admission::{Admission, Shared};
use crate::sync::{Arc, AtomicU64, Ordering};
use crate::time::Clock;
use core::fmt;

/// The count of requests a [`LoadShed`](super::LoadShed) rejected, shared
/// by every clone of the service and every service of one
/// [`LoadShedLayer`](super::LoadShedLayer).
///
/// By default the count is the `LoadShed`'s own. Built with
/// [`counting_in`](super::LoadShedLayer::counting_in), the rejections are
/// added to an [`Admission`]'s [`Stats::shed`](crate::admission::Stats::shed)
/// instead, next to the limit's own sheds, so one number tells how many
/// requests were turned away.
#[derive(Clone)]
pub struct ShedCounter {
    sink: Sink,
}

#[derive(Clone)]
enum Sink {
    Own(Arc<AtomicU64>),
    Admission(Arc<Shared>),
}

impl ShedCounter {
    /// A new count of its own, at zero.
    pub fn new() -> Self {
        Self {
            sink: Sink::Own(Arc::new(AtomicU64::new(0))),
        }
    }

    /// Counts into `admission`'s `Stats::shed`.
    pub fn in_admission<C: Clock>(admission: &Admission<C>) -> Self {
        Self {
            sink: Sink::Admission(Arc::clone(admission.shared())),
        }
    }

    /// The requests rejected so far (for [`in_admission`](Self::in_admission),
    /// the admission's whole `shed` count).
    pub fn get(&self) -> u64 {
        self.cell().load(Ordering::Relaxed)
    }

    pub(crate) fn add_one(&self) {
        self.cell().fetch_add(1, Ordering::Relaxed);
    }

    fn cell(&self) -> &AtomicU64 {
        match &self.sink {
            Sink::Own(count) => count,
            Sink::Admission(shared) => shared.shed_counter(),
        }
    }
}

impl Default for ShedCounter {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for ShedCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sink = match self.sink {
            Sink::Own(_) => "own",
            Sink::Admission(_) => "admission",
        };
        f.debug_struct("ShedCounter")
            .field("sink", &sink)
            .field("shed", &self.get())
            .finish()
    }
}
