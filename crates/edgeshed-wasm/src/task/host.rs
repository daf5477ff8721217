//! The one host choice, made once: workerd (every request needs its own
//! timers and steps must stay in their request's turn) or a host where
//! nothing ties a continuation to a request (Node.js, browsers).

use crate::host::js::in_workerd;

/// The kind of JavaScript host the executor runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Host {
    /// workerd (Cloudflare Workers): each task steps in its own request's
    /// turn, through promises made there; every sleep has its own timer.
    PerRequest,
    /// Node.js, browsers: woken tasks wait in one run queue drained in a
    /// microtask; sleeps share one host timer.
    Shared,
}

thread_local! {
    /// Decided once per instance.
    static HOST: Host = if in_workerd() { Host::PerRequest } else { Host::Shared };
}

/// The host this instance runs on (decided once, when first asked).
pub fn host() -> Host {
    HOST.with(|host| *host)
}

/// Whether the host is workerd, where every request needs its own timers
/// and steps must stay in their request's turn.
pub(crate) fn per_request_host() -> bool {
    host() == Host::PerRequest
}
