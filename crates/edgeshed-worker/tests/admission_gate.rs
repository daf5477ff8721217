//! The fan-out's admission gate (src/gate.rs): no call of a request goes on
//! to its fetch before every required call of that request (to another
//! origin) is admitted.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]

use edgeshed_worker::gate::AdmissionGate;
use futures_util::future::FutureExt;

#[test]
fn admitted_calls_wait_until_every_required_call_is_admitted() {
    // required calls to origins 0 and 1; an optional one to origin 2
    let gate = AdmissionGate::new([0, 1]);
    let mut required = Box::pin(gate.admitted(0, true));
    let mut optional = Box::pin(gate.admitted(2, false));
    assert!(required.as_mut().now_or_never().is_none());
    assert!(
        optional.as_mut().now_or_never().is_none(),
        "optional calls wait too"
    );
    // polled again: counted once, not twice
    assert!(required.as_mut().now_or_never().is_none());
    assert!(!gate.is_open_for(None));
    assert!(
        gate.admitted(1, true).now_or_never().is_some(),
        "the last required call opens it"
    );
    assert!(required.now_or_never().is_some());
    assert!(optional.now_or_never().is_some());
    assert!(gate.is_open_for(None));
}

#[test]
fn a_required_call_never_admitted_keeps_the_gate_shut() {
    // the second required call is refused (its request is answered 503/504
    // and every call dropped): the first never fetched
    let gate = AdmissionGate::new([0, 1]);
    let mut first = Box::pin(gate.admitted(0, true));
    assert!(first.as_mut().now_or_never().is_none());
    drop(first);
    assert!(!gate.is_open_for(None));
}

#[test]
fn a_call_never_waits_for_required_calls_to_its_own_origin() {
    // a route calling origin 0 twice (both required) and origin 1 optionally:
    // the second call to 0 may be queued for the permit the first holds
    let gate = AdmissionGate::new([0, 0]);
    assert!(gate.admitted(0, true).now_or_never().is_some());
    assert!(
        gate.admitted(0, false).now_or_never().is_some(),
        "nor does an optional call to that origin"
    );
    assert!(
        gate.admitted(1, false).now_or_never().is_none(),
        "a call to another origin waits for the second call to 0"
    );
    assert!(gate.admitted(0, true).now_or_never().is_some());
    assert!(gate.admitted(1, false).now_or_never().is_some());
}

#[test]
fn without_required_calls_the_gate_is_open() {
    let gate = AdmissionGate::new([]);
    assert!(gate.is_open_for(None));
    assert!(gate.admitted(0, false).now_or_never().is_some());
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
    let gate = AdmissionGate::new([0, 1]);
    let mut waiting = Box::pin(gate.admitted(0, true));
    let mut cx = Context::from_waker(&waker);
    assert!(waiting.as_mut().poll(&mut cx).is_pending());
    assert_eq!(count.0.load(Ordering::SeqCst), 0);
    assert!(gate.admitted(1, true).now_or_never().is_some());
    assert_eq!(
        count.0.load(Ordering::SeqCst),
        1,
        "woken once the gate opened"
    );
    assert!(waiting.as_mut().poll(&mut cx).is_ready());
}
