use super::{Clock, Instant, RealClock};
use crate::sync::{lock, Arc, Mutex};
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::collections::BTreeMap;

/// A clock that moves only when told to: deterministic time for tests.
///
/// Clones share one time line. [`advance`](ManualClock::advance) wakes every
/// sleep whose deadline has been reached.
///
/// ```
/// use edgeshed::time::{Clock, ManualClock};
/// use std::time::Duration;
///
/// let clock = ManualClock::new();
/// let start = clock.now();
/// clock.advance(Duration::from_millis(20));
/// assert_eq!(clock.now().saturating_duration_since(start), Duration::from_millis(20));
/// ```
#[derive(Clone, Debug, Default)]
pub struct ManualClock {
    shared: Arc<Mutex<Timeline>>,
}

#[derive(Debug, Default)]
struct Timeline {
    now: Instant,
    next_id: u64,
    timers: BTreeMap<(Instant, u64), Waker>,
}

impl ManualClock {
    /// A clock standing at its origin.
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves time forward by `by` and wakes the sleeps that are now due.
    pub fn advance(&self, by: Duration) {
        let due: Vec<Waker> = {
            let mut timeline = lock(&self.shared);
            timeline.now = timeline.now + by;
            let first_not_due = (timeline.now.saturating_add(Duration::from_nanos(1)), 0);
            let later = timeline.timers.split_off(&first_not_due);
            let due = core::mem::replace(&mut timeline.timers, later);
            due.into_values().collect()
        };
        due.into_iter().for_each(Waker::wake);
    }

    /// How many sleeps are currently armed and waiting (polled, not yet due, not dropped).
    pub fn armed_timers(&self) -> usize {
        lock(&self.shared).timers.len()
    }
}

impl Clock for ManualClock {
    type Sleep = ManualSleep;

    fn now(&self) -> Instant {
        lock(&self.shared).now
    }

    /// The time since the clock's origin: manual clocks created together
    /// agree on it, like the wall clocks of isolates.
    fn wall_time(&self) -> Option<Duration> {
        Some(self.now().since_origin())
    }

    fn sleep_until(&self, deadline: Instant) -> ManualSleep {
        let id = {
            let mut timeline = lock(&self.shared);
            timeline.next_id += 1;
            timeline.next_id
        };
        ManualSleep {
            clock: self.clone(),
            deadline,
            id,
        }
    }
}

/// Its sleeps complete as soon as [`ManualClock::advance`] reaches them.
impl RealClock for ManualClock {}

/// The sleep future of a [`ManualClock`].
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct ManualSleep {
    clock: ManualClock,
    deadline: Instant,
    id: u64,
}

impl Future for ManualSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut timeline = lock(&self.clock.shared);
        let key = (self.deadline, self.id);
        if timeline.now >= self.deadline {
            timeline.timers.remove(&key);
            return Poll::Ready(());
        }
        match timeline.timers.get_mut(&key) {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            Some(waker) => waker.clone_from(cx.waker()),
            None => {
                timeline.timers.insert(key, cx.waker().clone());
            }
        }
        Poll::Pending
    }
}

impl Drop for ManualSleep {
    fn drop(&mut self) {
        lock(&self.clock.shared)
            .timers
            .remove(&(self.deadline, self.id));
    }
}
