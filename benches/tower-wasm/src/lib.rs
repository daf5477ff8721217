//! tower's `ConcurrencyLimit` and `LoadShed` behind a `Limiter.run`-like JS
//! API, for the Node.js benchmark (benches/node/limiter.bench.mjs).
//!
//! `new TowerLimiter(limit, shed)`: `shed = false` is
//! `ConcurrencyLimit::new(inner, limit)` (callers wait; tower's queue is
//! unbounded), `shed = true` is `LoadShed::new(ConcurrencyLimit::new(inner,
//! limit))` (rejected at once with an `OverloadedError`, status 503, like
//! edgeshed's). `run(fn)` clones the service (clones share the semaphore),
//! awaits `ready()`, calls `fn` and awaits its (promise) result, all in one
//! wasm-bindgen-futures task.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use tower::limit::ConcurrencyLimit;
use tower::load_shed::LoadShed;
use tower::{Service, ServiceExt};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

/// Calls the JS function and awaits what it returns. JS errors travel inside
/// `Ok` (a `JsValue` is not `Send`, so it cannot be tower's `BoxError`).
#[derive(Clone, Copy)]
struct CallJs;

type Outcome = Result<JsValue, JsValue>;

impl Service<js_sys::Function> for CallJs {
    type Response = Outcome;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Outcome, Infallible>>>>;

    fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, task: js_sys::Function) -> Self::Future {
        Box::pin(async move {
            let returned = match task.call0(&JsValue::UNDEFINED) {
                Ok(value) => value,
                Err(error) => return Ok(Err(error)),
            };
            Ok(JsFuture::from(js_sys::Promise::resolve(&returned)).await)
        })
    }
}

fn overloaded() -> JsValue {
    let error = js_sys::Error::new("service overloaded");
    error.set_name("OverloadedError");
    let _ = js_sys::Reflect::set(&error, &"status".into(), &JsValue::from(503));
    error.into()
}

enum Stack {
    Wait(ConcurrencyLimit<CallJs>),
    Shed(LoadShed<ConcurrencyLimit<CallJs>>),
}

/// tower's limiter with a `run(fn)` method.
#[wasm_bindgen]
pub struct TowerLimiter {
    stack: Stack,
}

#[wasm_bindgen]
impl TowerLimiter {
    #[wasm_bindgen(constructor)]
    pub fn new(limit: usize, shed: bool) -> TowerLimiter {
        let limited = ConcurrencyLimit::new(CallJs, limit);
        TowerLimiter {
            stack: if shed { Stack::Shed(LoadShed::new(limited)) } else { Stack::Wait(limited) },
        }
    }

    /// Runs `task` once admitted; rejects with an `OverloadedError` when shed.
    pub fn run(&self, task: js_sys::Function) -> js_sys::Promise {
        match &self.stack {
            Stack::Wait(service) => {
                let service = service.clone();
                future_to_promise(async move {
                    match service.oneshot(task).await {
                        Ok(outcome) => outcome,
                        Err(never) => match never {},
                    }
                })
            }
            Stack::Shed(service) => {
                let service = service.clone();
                future_to_promise(async move {
                    match service.oneshot(task).await {
                        Ok(outcome) => outcome,
                        Err(_) => Err(overloaded()),
                    }
                })
            }
        }
    }
}
