//! Many randomised `run` and `fetch` calls against the JS `Limiter` (Node
//! and headless Chromium): every permit comes back, nothing stays queued.
#![cfg(target_arch = "wasm32")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use js_sys::Array;
use support::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

/// A small deterministic PRNG (xorshift64*), so a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[wasm_bindgen_test]
async fn a_thousand_randomised_calls_leave_nothing_in_flight_or_queued() {
    let limiter = limiter(r#"{"maxInFlight": 4, "maxQueue": 8, "queueTimeoutMs": 3}"#);
    let mut rng = Rng(0x005e_ed0f_ed9e_5bed);
    let log = Array::new();
    let mut calls = Vec::new();
    let mut gates = Vec::new();
    let mut aborts = Vec::new();
    for i in 0..1000 {
        let promise = match rng.below(6) {
            0 => run(&limiter, returning(&JsValue::from(i)), JsValue::UNDEFINED),
            1 => run(&limiter, rejecting("boom"), JsValue::UNDEFINED),
            2 => run(&limiter, throwing("sync"), JsValue::UNDEFINED),
            3 => {
                let gate = deferred();
                let promise = run(&limiter, gated(&gate, &log, "gated"), JsValue::UNDEFINED);
                gates.push(gate);
                promise
            }
            4 => {
                let gate = deferred();
                let promise = run(
                    &limiter,
                    gated(&gate, &log, "deadline"),
                    with_deadline(rng.below(4) as f64),
                );
                gates.push(gate);
                promise
            }
            _ => {
                let controller = abort_controller();
                let gate = deferred();
                let promise = run(
                    &limiter,
                    gated(&gate, &log, "aborted"),
                    with_signal(&controller.signal()),
                );
                aborts.push(controller);
                gates.push(gate);
                promise
            }
        };
        assert!(stat(&limiter, "inFlight") <= 4.0);
        assert!(stat(&limiter, "queued") <= 8.0);
        calls.push(promise);
        // Now and then let time pass and settle some of the outstanding work.
        if rng.below(8) == 0 {
            flush().await;
            for gate in gates.drain(..) {
                if rng.below(2) == 0 {
                    call(&gate, "resolve", &[&JsValue::NULL]);
                } else {
                    call(&gate, "reject", &[&"rejected".into()]);
                }
            }
            for controller in aborts.drain(..) {
                controller.abort();
            }
        }
    }
    for gate in gates.drain(..) {
        call(&gate, "resolve", &[&JsValue::NULL]);
    }
    for controller in aborts.drain(..) {
        controller.abort();
    }
    let mut settled = 0;
    for promise in calls {
        let _ = outcome(promise).await;
        settled += 1;
    }
    assert_eq!(settled, 1000);
    assert_eq!(stat(&limiter, "inFlight"), 0.0);
    assert_eq!(stat(&limiter, "queued"), 0.0);
    let admitted = stat(&limiter, "admitted");
    let rejected = stat(&limiter, "shed") + stat(&limiter, "queueTimeouts");
    assert!(
        admitted > 0.0 && rejected > 0.0,
        "admitted {admitted}, rejected {rejected}"
    );
}
