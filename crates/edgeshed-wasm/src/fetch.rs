//! The host's `fetch`, called so that nothing can throw through a poll.

pub use crate::host::js::{global_fetch, with_signal};
