//! A tiny executor that resumes each task in the JavaScript context that
//! started it.
//!
//! wasm-bindgen-futures keeps one global run queue: a task woken by another
//! request (a permit released elsewhere) is then polled inside *that*
//! request's turn. In workerd every I/O object belongs to the request that
//! created it, so the woken task's timers and fetches would be created on
//! behalf of the wrong request, and the waiting request itself would look
//! hung and be cancelled.
//!
//! Here, in workerd, a task that a step leaves waiting creates fresh
//! promises in its own context and registers its next step on them; its
//! waker only resolves those promises. Whoever calls a waker, the step runs
//! where the task lives.
//!
//! The executor honours the `Waker` contract: a wake goes through the waker
//! a future was polled with (see `waker.rs`). Nothing is bound to "the task
//! being polled right now", so a future made or first polled under one task
//! (a nested `Limiter.run` called from another limiter's `fn`) and then
//! polled by its own task wakes its own task, and combinators such as
//! `futures-util`'s `FuturesUnordered` and `select` work inside a task.
//!
//! Two promises, because workerd settles a promise resolved from another
//! request at once but may deliver its continuation late (after the
//! resolving request's turn, or only when the owner next runs). A later wake
//! from the task's *own* timer or I/O would then find its promise already
//! settled and be lost, and workerd would cancel the request as hung. So
//! wakes that may come from another request (semaphore hand-offs, through
//! [`RemoteWake`]) resolve one promise, and all other wakes the other; a
//! task's own timer always wakes locally ([`wake_from_own_event`]), even
//! through a `RemoteWake`. For the same reason, in workerd, combinators
//! that coalesce their children's wakes (`FuturesUnordered` forwards only
//! the first wake until the next poll) must not carry a hand-off next to
//! local wakes: the gateway's fan-out uses `select_all`, which polls every
//! child with the task's own waker. Even so, workerd now and then
//! delivers a step in another request's turn: a request's task first checks
//! its request's signal and skips such a step (see [`spawn_for_request`]).
//! And every callback into wasm is guarded (`js/mod.rs`): an exception that
//! unwinds through a poll fails its task instead of leaving it hanging.
//!
//! All of that is for workerd. Elsewhere (Node.js, browsers) nothing ties a
//! continuation to a request, so woken tasks simply wait in one run queue
//! drained in a microtask: no promise per wake.

// Module order (each uses only those above it): host, state, executor,
// runtime, hint, step, waker, js.
mod executor;
mod hint;
mod host;
mod js;
mod runtime;
mod state;
mod step;
mod waker;

pub use hint::wake_from_own_event;
pub(crate) use host::per_request_host;
pub use host::{host, Host};
pub(crate) use js::guard;
pub use js::{
    foreign_steps, hand_over_settlement, live_tasks, lost_tasks, reclaim_expired, spawn,
    spawn_for_request, Spawned,
};
pub use waker::RemoteWake;

#[cfg(all(test, not(target_arch = "wasm32")))]
mod native_tests;
#[cfg(all(test, target_arch = "wasm32"))]
mod tests;
