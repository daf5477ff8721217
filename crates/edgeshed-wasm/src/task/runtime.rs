//! [`Runtime`]: what the generic executor core (`executor.rs`, `step.rs`)
//! needs from its host. The JavaScript runtime is in `js/`; native unit
//! tests bring a fake one.

use super::executor::Executor;

/// The host side of the executor: where its one [`Executor`] lives and how
/// a task's steps reach the host.
pub(super) trait Runtime: Sized + 'static {
    /// A task's result.
    type Output: 'static;
    /// What the host keeps per task.
    type Io: 'static;
    /// How a task woken outside the run queue resumes (workerd: a
    /// promise's resolver).
    type Resume;
    /// A request's context probe (see `spawn_for_request`).
    type Probe;

    /// Runs `f` with the one executor.
    fn with<T>(f: impl FnOnce(&Executor<Self::Io, Self::Output>) -> T) -> T;
    /// Whether woken tasks go through the run queue (else each resumes
    /// through a [`Self::Resume`] of its own).
    fn run_queue() -> bool;
    /// Schedules a drain of the run queue (a microtask).
    fn schedule_drain();
    /// How a task woken now resumes (`remote`: the wake may come from
    /// another request).
    fn resume_of(io: &Self::Io, remote: bool) -> Option<Self::Resume>;
    /// Resumes task `id`.
    fn resume(resume: Self::Resume, id: u64);
    /// The task's context probe, if it has one.
    fn probe(io: &Self::Io) -> Option<Self::Probe>;
    /// Whether this turn belongs to the probe's request.
    fn in_own_context(probe: &Self::Probe) -> bool;
    /// A step left task `id` waiting: prepares how it resumes.
    fn parked(id: u64, uses_remote: bool);
    /// A task ended with `output`: settles its promise.
    fn settle(io: Self::Io, output: Self::Output);
}
