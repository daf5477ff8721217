//! The executor honours the `Waker` contract: combinators that hand their
//! children wakers of their own work inside a task, and ids never alias.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::deferred;
use crate::task::js::{live_task_ids, skip_task_generations};
use crate::task::{live_tasks, spawn, RemoteWake};
use crate::JsClock;
use core::time::Duration;
use edgeshed::admission::{Admission, Policy};
use edgeshed::time::Clock;
use futures_util::future::{select, Either};
use futures_util::stream::{FuturesUnordered, StreamExt};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen(inline_js = r#"
export function settleWithin(promise, ms) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve("still pending"), ms);
    promise.then(
      (value) => { clearTimeout(timer); resolve(value); },
      (error) => { clearTimeout(timer); resolve(`rejected: ${error}`); },
    );
  });
}
"#)]
extern "C" {
    /// The promise's value, or `"still pending"` after `ms`.
    #[wasm_bindgen(js_name = settleWithin)]
    fn settle_within(promise: &js_sys::Promise, ms: f64) -> js_sys::Promise;
}

async fn within(promise: &js_sys::Promise, ms: f64) -> JsValue {
    JsFuture::from(settle_within(promise, ms)).await.unwrap()
}

fn sleep_ms(ms: u64) -> crate::JsSleep {
    JsClock.sleep_until(JsClock.now() + Duration::from_millis(ms))
}

#[wasm_bindgen_test]
async fn futures_unordered_of_timers_completes_in_deadline_order_inside_a_task() {
    let task = spawn(async {
        let mut sleeps: FuturesUnordered<_> = [30u64, 10, 20]
            .into_iter()
            .map(|ms| async move {
                sleep_ms(ms).await;
                ms
            })
            .collect();
        let mut order = Vec::new();
        while let Some(ms) = sleeps.next().await {
            order.push(ms.to_string());
        }
        Ok(JsValue::from_str(&order.join(",")))
    });
    assert_eq!(within(&task, 2000.0).await, "10,20,30");
}

#[wasm_bindgen_test]
async fn select_of_a_timer_and_a_promise_inside_a_task_takes_the_first() {
    let gate = deferred();
    let promise: js_sys::Promise = js_sys::Reflect::get(&gate, &"promise".into())
        .unwrap()
        .into();
    let task = spawn(async move {
        // The timer wins: the promise never settles.
        let first = match select(JsFuture::from(promise.clone()), sleep_ms(10)).await {
            Either::Left(_) => "promise",
            Either::Right(_) => "timer",
        };
        Ok(JsValue::from_str(first))
    });
    assert_eq!(within(&task, 2000.0).await, "timer");
}

#[wasm_bindgen_test]
async fn a_permit_hand_off_inside_futures_unordered_wakes_the_waiting_child() {
    let admission = Admission::new(1, Policy::Wait, JsClock).unwrap();
    let held = admission.try_admit().unwrap();
    let waiting = admission.clone();
    let task = spawn(async move {
        let mut children: FuturesUnordered<_> = FuturesUnordered::new();
        children.push(Box::pin(async move {
            RemoteWake::new(waiting.admit()).await.is_ok()
        }));
        let admitted = children.next().await.unwrap_or(false);
        Ok(JsValue::from_bool(admitted))
    });
    assert_eq!(admission.stats().queued, 1);
    drop(held); // hands the permit to the child, through its own waker
    assert_eq!(within(&task, 2000.0).await, JsValue::TRUE);
    assert_eq!(admission.stats().in_flight, 0);
}

#[wasm_bindgen_test]
async fn task_ids_past_2_pow_32_never_replace_a_live_task() {
    let admission = Admission::new(1, Policy::Wait, JsClock).unwrap();
    let gate = deferred();
    let opened: js_sys::Promise = js_sys::Reflect::get(&gate, &"promise".into())
        .unwrap()
        .into();
    let permit = admission.try_admit().unwrap();
    // A live task that holds the permit until the gate opens.
    let before = live_task_ids();
    let first = spawn(async move {
        let value = JsFuture::from(opened).await;
        drop(permit);
        value
    });
    let first_id = live_task_ids()
        .into_iter()
        .find(|id| !before.contains(id))
        .expect("the live task's id");
    // A waiter behind it, and tasks whose ids are past 2^32 (a 32-bit id
    // would alias the first task's).
    let waiting = admission.clone();
    let waiter = spawn(async move {
        let admitted = RemoteWake::new(waiting.admit()).await.is_ok();
        Ok(JsValue::from_bool(admitted))
    });
    skip_task_generations(1 << 8);
    assert!(live_task_ids().contains(&first_id));
    let third = spawn(async { Ok(JsValue::from(3)) });
    assert_eq!(within(&third, 2000.0).await, 3);
    let resolve: js_sys::Function = js_sys::Reflect::get(&gate, &"resolve".into())
        .unwrap()
        .into();
    resolve.call1(&JsValue::UNDEFINED, &"first".into()).unwrap();
    assert_eq!(
        within(&first, 2000.0).await,
        "first",
        "the first task ran to its end"
    );
    assert_eq!(
        within(&waiter, 2000.0).await,
        JsValue::TRUE,
        "and handed its permit on"
    );
    assert_eq!(live_tasks(), 0);
}
