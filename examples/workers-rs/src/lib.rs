//! A Rust Worker on the `worker` crate (workers-rs) with an edgeshed limit in
//! front of one origin: at most `MAX_IN_FLIGHT` origin calls at once per
//! isolate, at most `MAX_QUEUE` more waiting up to `QUEUE_TIMEOUT_MS`, the
//! rest answered 503 with `Retry-After` at once; each request gets
//! `DEADLINE_MS` for its wait and its origin call together (then 504).
//!
//! Time comes from the JavaScript host through edgeshed-wasm's `JsClock`
//! (`std::time::Instant` panics on wasm32). Each request's work runs as an
//! edgeshed-wasm task (`spawn_for_request`), so a permit released by one
//! request wakes a waiter in *its own* request's turn, as workerd requires.
//!
//! Build: `bash scripts/build-workers-rs.sh` (worker-build, no downloads).
//! Run: `npx wrangler dev` in this directory. `GET /stats`: the limit's state.

mod limit;

use limit::Limit;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use worker::{event, Context, Env, Request, Response, Result};

/// The longest a request may legitimately live: its deadline, plus slack.
/// A task older than twice that was cancelled by workerd and is reclaimed.
const SLACK_MS: f64 = 1000.0;

#[event(fetch)]
async fn fetch(request: Request, env: Env, _ctx: Context) -> Result<Response> {
    let limit = match Limit::for_isolate(&env) {
        Ok(limit) => limit,
        Err(message) => return Response::error(format!("configuration: {message}"), 500),
    };
    if request.path() == "/stats" {
        return limit.stats();
    }
    // Tasks of requests that workerd cancelled give their permits back.
    edgeshed_wasm::task::reclaim_expired();
    let target = limit.target(&request.path());
    let lifetime = limit.deadline().as_secs_f64() * 1000.0 + SLACK_MS;
    let probe = request.inner().signal().into();
    let task =
        edgeshed_wasm::task::spawn_for_request(call(limit, target), Some(lifetime), Some(probe));
    let answer = JsFuture::from(task.promise).await?;
    let response: web_sys::Response = answer.dyn_into()?;
    Ok(response.into())
}

/// One request's task: admission, then the origin call, under one deadline.
async fn call(
    limit: Rc<Limit>,
    target: String,
) -> core::result::Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue> {
    let response = limit
        .call(target)
        .await
        .or_else(|error| Response::error(error.to_string(), 500));
    let response = response.map_err(|error| wasm_bindgen::JsValue::from_str(&error.to_string()))?;
    Ok(web_sys::Response::from(response).into())
}
