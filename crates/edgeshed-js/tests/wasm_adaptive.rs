//! The JS `Limiter`'s adaptive limit and `setLimit`, in Node and in headless
//! Chromium (`wasm-pack test --node` / `--headless --chrome`). The detailed
//! behaviour, on a controllable clock, is in tests/js/adaptive.test.mjs.
#![cfg(target_arch = "wasm32")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use js_sys::{Array, Promise};
use support::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

#[wasm_bindgen(inline_js = r#"
export function rejectingWith(status) {
  return () => Promise.reject(Object.assign(new Error(`status ${status}`), { status }));
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = rejectingWith)]
    fn rejecting_with(status: f64) -> JsValue;
}

#[wasm_bindgen_test]
async fn an_adaptive_aimd_limit_backs_off_on_a_503_rejection_but_not_on_other_errors() {
    let limiter = limiter(r#"{"adaptive": {"algorithm": "aimd", "initialLimit": 10}}"#);
    assert_eq!(stat(&limiter, "limit"), 10.0);
    for status in [500.0, 504.0] {
        let error = outcome(run(&limiter, rejecting_with(status), JsValue::UNDEFINED))
            .await
            .unwrap_err();
        assert_eq!(get(&error, "status").as_f64(), Some(status));
    }
    assert_eq!(stat(&limiter, "limit"), 10.0, "500 and 504 are no drops");
    outcome(run(&limiter, rejecting_with(503.0), JsValue::UNDEFINED))
        .await
        .unwrap_err();
    assert_eq!(
        stat(&limiter, "limit"),
        9.0,
        "backed off by 10 % on the 503"
    );
    assert_eq!(stat(&limiter, "inFlight"), 0.0);
}

#[wasm_bindgen_test]
async fn set_limit_raises_a_fixed_limit_at_once_and_an_adaptive_limiter_refuses_it() {
    let limiter = limiter(r#"{"maxInFlight": 1, "maxQueue": 3, "queueTimeoutMs": 60000}"#);
    let gate = deferred();
    let log = Array::new();
    let calls: Vec<Promise> = (0..3)
        .map(|i| {
            run(
                &limiter,
                gated(&gate, &log, &format!("c{i}")),
                JsValue::UNDEFINED,
            )
        })
        .collect();
    assert_eq!(stat(&limiter, "queued"), 2.0);
    limiter.set_limit(3.0.into()).unwrap();
    assert_eq!(stat(&limiter, "limit"), 3.0);
    assert_eq!(
        stat(&limiter, "queued"),
        0.0,
        "the waiters were handed slots at once"
    );
    flush().await;
    assert_eq!(log.length(), 3);
    call(&gate, "resolve", &[&"done".into()]);
    for call in calls {
        assert_eq!(outcome(call).await.unwrap(), "done");
    }
    let refused = limiter.set_limit(0.0.into()).unwrap_err();
    assert!(refused.is_instance_of::<js_sys::RangeError>());

    let adaptive = support::limiter(r#"{"adaptive": {"algorithm": "gradient2"}}"#);
    let refused = adaptive.set_limit(8.0.into()).unwrap_err();
    assert!(refused.is_instance_of::<js_sys::TypeError>());
    assert_eq!(stat(&adaptive, "limit"), 6.0);
}
