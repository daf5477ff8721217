//! The executor under an exception that unwinds through a poll.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::guard::lost_tasks;
use super::{current, live_tasks, spawn};
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
"#)]
extern "C" {
    /// `{ settled, value?, error? }`, kept up to date as `promise` settles.
    fn watch(promise: &js_sys::Promise) -> JsValue;
    /// Resolves after one macrotask turn (every pending reaction has run).
    #[wasm_bindgen(js_name = nextMacrotask)]
    fn next_macrotask() -> js_sys::Promise;
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
