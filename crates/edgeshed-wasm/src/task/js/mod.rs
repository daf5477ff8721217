//! The executor on the JavaScript host: its runtime (`runtime.rs`) and its
//! public face (`api.rs`, which uses the runtime).

mod api;
mod runtime;

#[cfg(all(test, target_arch = "wasm32"))]
pub(super) use api::{current, live_task_ids, skip_task_generations};
pub use api::{
    foreign_steps, hand_over_settlement, live_tasks, lost_tasks, reclaim_expired, spawn,
    spawn_for_request, Spawned,
};

pub(crate) use runtime::guard;
