//! The fan-out's admission gate (src/gate.rs): no call of a request goes on
//! to its fetch before every required call of that request is admitted.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]

use edgeshed_worker::gate::AdmissionGate;
use futures_util::future::FutureExt;

#[test]
fn admitted_calls_wait_until_every_required_call_is_admitted() {
    let gate = AdmissionGate::new(2);
    let mut required = Box::pin(gate.admitted(true));
    let mut optional = Box::pin(gate.admitted(false));
    assert!(required.as_mut().now_or_never().is_none());
    assert!(
        optional.as_mut().now_or_never().is_none(),
        "optional calls wait too"
    );
    // polled again: counted once, not twice
    assert!(required.as_mut().now_or_never().is_none());
    assert!(!gate.is_open());
    assert!(
        gate.admitted(true).now_or_never().is_some(),
        "the last required call opens it"
    );
    assert!(required.now_or_never().is_some());
    assert!(optional.now_or_never().is_some());
}

#[test]
fn a_required_call_never_admitted_keeps_the_gate_shut() {
    // the second required call is refused (its request is answered 503/504
    // and every call dropped): the first never fetched
    let gate = AdmissionGate::new(2);
    let mut first = Box::pin(gate.admitted(true));
    assert!(first.as_mut().now_or_never().is_none());
    drop(first);
    assert!(!gate.is_open());
}

#[test]
fn without_required_calls_the_gate_is_open() {
    let gate = AdmissionGate::new(0);
    assert!(gate.is_open());
    assert!(gate.admitted(false).now_or_never().is_some());
}

#[test]
fn the_gate_wakes_the_waiting_calls_when_it_opens() {
    use std::future::Future;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::{Context, Wake, Waker};

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let count = Arc::new(Count(AtomicUsize::new(0)));
    let waker = Waker::from(Arc::clone(&count));
    let gate = AdmissionGate::new(2);
    let mut waiting = Box::pin(gate.admitted(true));
    let mut cx = Context::from_waker(&waker);
    assert!(waiting.as_mut().poll(&mut cx).is_pending());
    assert_eq!(count.0.load(Ordering::SeqCst), 0);
    assert!(gate.admitted(true).now_or_never().is_some());
    assert_eq!(
        count.0.load(Ordering::SeqCst),
        1,
        "woken once the gate opened"
    );
}
