//! The events of the scale simulation (`scale_sim.rs`), in time order.
#![allow(dead_code)]

use edgeshed_worker::budget::{LeaseRequest, WatchRequest};

use super::object::Reply;

/// Something that happens at a time.
#[derive(Debug, Clone)]
pub enum Ev {
    /// A request arrives somewhere in the fleet.
    Arrival,
    /// A lease call reaches the object; its answer takes `back` ms.
    Lease {
        slot: usize,
        gen: u64,
        no: u64,
        req: LeaseRequest,
        back: u64,
    },
    /// A watch reaches the object.
    Watch {
        slot: usize,
        gen: u64,
        no: u64,
        watch: WatchRequest,
        back: u64,
    },
    /// An answer reaches a holder.
    Reply {
        slot: usize,
        gen: u64,
        reply: Reply,
    },
    /// A lease call's (or watch's) time is up: failed if still under way.
    LeaseTimeout {
        slot: usize,
        gen: u64,
        no: u64,
    },
    WatchTimeout {
        slot: usize,
        gen: u64,
        no: u64,
    },
    /// A call at the origin ends (of an isolate maybe evicted since).
    CallEnd {
        slot: usize,
        gen: u64,
    },
    /// An isolate wakes: a request's patience or limit, or its timer.
    Wake {
        slot: usize,
        gen: u64,
    },
    Timer {
        slot: usize,
        gen: u64,
        at: u64,
    },
    /// The object's alarm or kept-call timer.
    Object {
        at: u64,
    },
    /// The isolate in `slot` is evicted and replaced.
    Evict {
        slot: usize,
    },
    /// The object restarts (loses its memory).
    Restart,
    /// A slow-object episode starts.
    Slow,
}

/// An event in the heap, ordered by time, then by when it was scheduled.
#[derive(Debug)]
pub struct Item {
    pub at: u64,
    pub seq: u64,
    pub ev: Ev,
}

impl PartialEq for Item {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

impl Eq for Item {}

impl PartialOrd for Item {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Item {
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}
