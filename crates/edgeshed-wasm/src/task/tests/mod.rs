//! The executor under an exception that unwinds through a poll, and a
//! request's task stepped in a foreign request's turn.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod reclaim;
mod wakers;

use super::js::current;
use super::lost_tasks;
use super::{foreign_steps, live_tasks, spawn, spawn_for_request};
use crate::race::or_never;
use crate::JsClock;
use core::time::Duration;
use edgeshed::time::Clock;
use futures_util::future::{select, Either};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen(inline_js = r#"
export function throwNow() { throw new Error("thrown through a poll"); }
export function watch(promise) {
  const state = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error) => Object.assign(state, { settled: true, error }),
  );
  return state;
}
export function nextMacrotask() { return new Promise((resolve) => setTimeout(resolve, 0)); }
export function contextProbe() {
  // Like a workerd request's signal: unreadable from another request's turn.
  return { foreign: false, get aborted() { if (this.foreign) throw new Error("foreign turn"); return false; } };
}
export function deferred() {
  let resolve;
  const promise = new Promise((r) => { resolve = r; });
  return { promise, resolve };
}
"#)]
extern "C" {
    /// `{ foreign, aborted }`: reading `aborted` throws while `foreign`.
    #[wasm_bindgen(js_name = contextProbe)]
    fn context_probe() -> JsValue;
    /// `{ promise, resolve }`.
    pub(super) fn deferred() -> JsValue;
    /// `{ settled, value?, error? }`, kept up to date as `promise` settles.
    pub(super) fn watch(promise: &js_sys::Promise) -> JsValue;
    /// Resolves after one macrotask turn (every pending reaction has run).
    #[wasm_bindgen(js_name = nextMacrotask)]
    pub(super) fn next_macrotask() -> js_sys::Promise;
    /// A JavaScript call that throws, imported without `catch`.
    #[wasm_bindgen(js_name = throwNow)]
    fn throw_now();
}

#[wasm_bindgen_test]
async fn an_exception_through_a_poll_fails_its_task_and_the_executor_goes_on() {
    let lost_before = lost_tasks();
    let gate = js_sys::Promise::resolve(&JsValue::NULL);
    let doomed = spawn({
        let gate = gate.clone();
        async move {
            // Resumes once through the executor's own (guarded) step...
            JsFuture::from(gate).await?;
            // ...where an exception unwinds through the poll.
            throw_now();
            Ok(JsValue::UNDEFINED)
        }
    });
    // Woken by the same promise, so stepped right after the doomed task
    // (in the same drain of the run queue, outside workerd).
    let bystander = spawn(async move {
        JsFuture::from(gate).await?;
        Ok(JsValue::from(3))
    });
    let state = watch(&doomed);
    let bystander = watch(&bystander);
    JsFuture::from(next_macrotask()).await.unwrap();
    let get = |key: &str| js_sys::Reflect::get(&state, &key.into()).unwrap();
    assert_eq!(get("settled"), JsValue::TRUE, "the task's promise settled");
    let of_bystander = |key: &str| js_sys::Reflect::get(&bystander, &key.into()).unwrap();
    assert_eq!(
        of_bystander("value"),
        3,
        "a task stepped after the unwound one still ran"
    );
    let message = js_sys::Reflect::get(&get("error"), &"message".into()).unwrap();
    assert_eq!(
        message.as_string().unwrap(),
        "edgeshed: an exception unwound through this task"
    );
    assert_eq!(lost_tasks(), lost_before + 1);
    assert_eq!(
        current(),
        None,
        "the unwound poll's task is no longer current"
    );

    let fine = spawn(async {
        let seven = JsFuture::from(js_sys::Promise::resolve(&JsValue::from(7))).await?;
        Ok(seven)
    });
    assert_eq!(JsFuture::from(fine).await.unwrap(), 7);
    assert_eq!(live_tasks(), 0);
}

#[wasm_bindgen_test]
async fn a_step_in_a_foreign_turn_is_skipped_and_the_task_goes_on_at_its_own_timer() {
    let get = |object: &JsValue, key: &str| js_sys::Reflect::get(object, &key.into()).unwrap();
    let set = |object: &JsValue, key: &str, value: &JsValue| {
        js_sys::Reflect::set(object, &key.into(), value).unwrap();
    };
    let probe = context_probe();
    let gate = deferred();
    let promise: js_sys::Promise = get(&gate, "promise").into();
    let skipped_before = foreign_steps();
    let task = spawn_for_request(
        async move {
            let timer = JsClock.sleep_until(JsClock.now() + Duration::from_millis(30));
            match select(JsFuture::from(promise), or_never(Some(timer))).await {
                Either::Left((value, _)) => value,
                Either::Right(_) => Ok(JsValue::from_str("timer")),
            }
        },
        None,
        Some(probe.clone()),
    )
    .promise;
    // The wake from the gate arrives while the task's request is not the
    // current one: that step is skipped, nothing is polled.
    set(&probe, "foreign", &JsValue::TRUE);
    let resolve: js_sys::Function = get(&gate, "resolve").into();
    resolve
        .call1(&JsValue::UNDEFINED, &JsValue::from(7))
        .unwrap();
    JsFuture::from(next_macrotask()).await.unwrap();
    assert_eq!(
        foreign_steps(),
        skipped_before + 1,
        "the foreign step was skipped"
    );
    let state = watch(&task);
    assert_eq!(get(&state, "settled"), JsValue::FALSE);
    // Back in its own turn, the task's own timer steps it, and it finds the
    // gate open (the work wins the race over the timer that woke it).
    set(&probe, "foreign", &JsValue::FALSE);
    assert_eq!(JsFuture::from(task).await.unwrap(), 7);
    assert_eq!(foreign_steps(), skipped_before + 1);
}

#[wasm_bindgen_test]
async fn a_request_task_says_whether_it_ended_in_its_first_step() {
    let at_once = spawn_for_request(async { Ok(JsValue::from(1)) }, Some(1000.0), None);
    assert!(at_once.ended, "nothing to wait for: no waitUntil needed");
    assert_eq!(JsFuture::from(at_once.promise).await.unwrap(), 1);
    let gate = deferred();
    let promise: js_sys::Promise = js_sys::Reflect::get(&gate, &"promise".into())
        .unwrap()
        .into();
    let waiting = spawn_for_request(
        async move { JsFuture::from(promise).await },
        Some(1000.0),
        None,
    );
    assert!(
        !waiting.ended,
        "it waits: the request must be kept alive for it"
    );
    let resolve: js_sys::Function = js_sys::Reflect::get(&gate, &"resolve".into())
        .unwrap()
        .into();
    resolve
        .call1(&JsValue::UNDEFINED, &JsValue::from(2))
        .unwrap();
    assert_eq!(JsFuture::from(waiting.promise).await.unwrap(), 2);
}
