//! # edgeshed-wasm
//!
//! A small runtime that drives [`edgeshed`]'s futures with
//! JavaScript promises on `wasm32-unknown-unknown`, for any wasm-bindgen
//! program: the edgeshed npm package, the edgeshed gateway, or a
//! workers-rs worker of your own.
//!
//! | module | what it gives you |
//! |---|---|
//! | [`task`] | an executor: [`spawn`](task::spawn) a future as a JavaScript promise |
//! | [`clock`] | [`JsClock`]: `performance.now()` and `setTimeout` as an edgeshed [`Clock`](edgeshed::time::Clock) |
//! | [`settled`] | [`Settled`](settled::Settled): a promise's outcome as a future |
//! | [`abort`] | [`Aborted`](abort::Aborted): an `AbortSignal` as a future |
//! | [`held`] | permits held on behalf of JavaScript until it calls back |
//! | [`body`] | a response body that holds a permit until it is done |
//! | [`fetch`] | the host's `fetch`, without throwing through a poll |
//! | [`race`] | [`or_never`](race::or_never): an optional future for `select` |
//! | [`seed_keys`] | the secret [`Key`](edgeshed::Key)s are hashed with, from WebCrypto |
//!
//! ## The contract
//!
//! **Where a step runs.** A task is polled first inside [`spawn`](task::spawn),
//! synchronously, in the caller's turn. After that, every step runs in the
//! JavaScript context of the request that spawned it (on workerd), whoever
//! woke it: a permit released by another request wakes the waiting task, and
//! the task continues in *its* request's turn, where its timers and fetches
//! belong. On Node.js and in browsers nothing ties a step to a request, and
//! woken tasks are stepped from one run queue drained in a microtask.
//!
//! **Wakes go through wakers.** A wake goes through the `Waker` a future was
//! polled with; the executor only decides where the step runs. So
//! `futures-util` combinators (`select`, `FuturesUnordered`) work inside a
//! task, and a future made or first polled under one task (a call nested in
//! another's) wakes the task that polls it.
//!
//! **What a caller provides.**
//! - Every wait must be bounded by a timer of the waiting task's own (a queue
//!   timeout or a deadline, through [`JsClock`]): workerd cancels, as hung, a
//!   request that waits only on a promise another request resolves.
//! - Wrap a wait for a permit that another request may release in
//!   [`RemoteWake`](task::RemoteWake): its wakes then take the workerd route
//!   that is safe for cross-request wakes.
//! - On workerd, a request's task should be spawned with
//!   [`spawn_for_request`](task::spawn_for_request), passing the request's
//!   `AbortSignal` as the context probe and the longest time the request can
//!   legitimately live, and [`reclaim_expired`](task::reclaim_expired) should
//!   be called on later requests: the permits of a request that workerd
//!   cancelled then come back.
//! - Never let a JavaScript exception unwind through a poll: call JavaScript
//!   through `catch` imports. (The executor's callbacks are guarded: an
//!   exception that does unwind fails its task, counted in
//!   [`lost_tasks`](task::lost_tasks), instead of hanging it.)
//!
//! ```no_run
//! use edgeshed::admission::{Admission, Policy};
//! use edgeshed_wasm::task::{spawn, RemoteWake};
//! use edgeshed_wasm::JsClock;
//! use std::time::Duration;
//! use wasm_bindgen::JsValue;
//!
//! let Ok(limit) = Admission::new(6, Policy::queue(12, Duration::from_millis(20)), JsClock) else {
//!     return; // a zero limit or queue timeout is refused
//! };
//! let promise = spawn(async move {
//!     // Queued at most 20 ms (the queue timer is armed by this task).
//!     let permit = RemoteWake::new(limit.admit()).await.map_err(|e| JsValue::from_str(&e.to_string()))?;
//!     // ... call the origin while holding `permit` ...
//!     drop(permit);
//!     Ok(JsValue::UNDEFINED)
//! });
//! # let _ = promise;
//! ```

pub mod abort;
pub mod body;
pub mod clock;
pub mod fetch;
pub mod held;
mod host;
mod id_map;
mod keys;
pub mod race;
pub mod settled;
mod sleep;
pub mod task;
mod timers;

pub use clock::JsClock;
pub use keys::seed_keys;
pub use sleep::JsSleep;
