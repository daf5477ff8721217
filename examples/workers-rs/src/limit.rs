//! The isolate's limit, read once from the Worker's vars, and a call through it.

use core::pin::pin;
use core::time::Duration;
use edgeshed::admission::{Admission, AdmitError, Policy};
use edgeshed::time::Clock;
use edgeshed_wasm::task::RemoteWake;
use edgeshed_wasm::JsClock;
use futures_util::future::{select, Either};
use std::cell::RefCell;
use std::rc::Rc;
use worker::{AbortController, Env, Fetch, Headers, Response, Result, Url};

thread_local! {
    /// Module scope: shared by every request this isolate handles.
    static LIMIT: RefCell<Option<Rc<Limit>>> = const { RefCell::new(None) };
}

/// The origin and the limit in front of it.
pub struct Limit {
    admission: Admission<JsClock>,
    origin: String,
    deadline: Duration,
}

/// `name` from the Worker's vars as a number; `default` when absent.
fn number(env: &Env, name: &str, default: u64) -> core::result::Result<u64, String> {
    match env.var(name) {
        Err(_) => Ok(default),
        Ok(value) => value
            .to_string()
            .parse()
            .map_err(|_| format!("{name} must be a non-negative integer, got {value:?}")),
    }
}

impl Limit {
    /// The isolate's limit, built from `env` on its first request.
    pub fn for_isolate(env: &Env) -> core::result::Result<Rc<Limit>, String> {
        if let Some(limit) = LIMIT.with(|cell| cell.borrow().clone()) {
            return Ok(limit);
        }
        let limit = Rc::new(Self::from_env(env)?);
        LIMIT.with(|cell| *cell.borrow_mut() = Some(limit.clone()));
        Ok(limit)
    }

    fn from_env(env: &Env) -> core::result::Result<Limit, String> {
        let origin = env
            .var("ORIGIN")
            .map_err(|_| "the ORIGIN var is missing".to_owned())?;
        let max_in_flight = number(env, "MAX_IN_FLIGHT", 6)? as usize;
        let max_queue = number(env, "MAX_QUEUE", 0)? as usize;
        let timeout = Duration::from_millis(number(env, "QUEUE_TIMEOUT_MS", 0)?);
        let deadline = Duration::from_millis(number(env, "DEADLINE_MS", 30_000)?);
        // Refuses a zero limit, and a queue without a timeout, naming them.
        let admission = Admission::new(max_in_flight, Policy::queue(max_queue, timeout), JsClock)
            .map_err(|error| error.to_string())?;
        Ok(Limit {
            admission,
            origin: origin.to_string(),
            deadline,
        })
    }

    /// Each request's budget for its wait and its origin call.
    pub fn deadline(&self) -> Duration {
        self.deadline
    }

    /// The origin URL for a request path.
    pub fn target(&self, path: &str) -> String {
        format!("{}{path}", self.origin.trim_end_matches('/'))
    }

    /// `GET /stats`: the limit's counters as JSON.
    pub fn stats(&self) -> Result<Response> {
        let stats = self.admission.stats();
        Response::ok(format!(
            r#"{{"inFlight":{},"queued":{},"limit":{},"admitted":{},"shed":{},"queueTimeouts":{},"expired":{}}}"#,
            stats.in_flight,
            stats.queued,
            stats.limit,
            stats.admitted,
            stats.shed,
            stats.queue_timeouts,
            stats.expired
        ))
    }

    /// Waits for a permit, then calls the origin with it; the whole of it
    /// within the deadline (JsClock's timers).
    pub async fn call(&self, target: String) -> Result<Response> {
        let deadline = JsClock.now().saturating_add(self.deadline);
        // RemoteWake: the permit may be handed over by another request.
        let permit = match RemoteWake::new(self.admission.admit_before(deadline)).await {
            Ok(permit) => permit,
            Err(refused) => return refusal(&refused),
        };
        let controller = AbortController::default();
        let signal = controller.signal();
        let origin_call = pin!(async {
            let url = Url::parse(&target)?;
            let mut answer = Fetch::Url(url).send_with_signal(&signal).await?;
            Ok::<_, worker::Error>((answer.status_code(), answer.text().await?))
        });
        let timer = pin!(JsClock.sleep_until(deadline));
        let outcome = select(origin_call, timer).await;
        drop(permit); // the origin call is over: the next waiter may go
        match outcome {
            Either::Left((Ok((status, body)), _)) => Ok(Response::ok(body)?.with_status(status)),
            Either::Left((Err(error), _)) => Response::error(format!("origin: {error}"), 502),
            Either::Right(_) => {
                controller.abort();
                Response::error("deadline", 504)
            }
        }
    }
}

/// The answer for a request the limit refused.
fn refusal(refused: &AdmitError) -> Result<Response> {
    match refused.overloaded() {
        Some(overloaded) => {
            // The body every face gives a refusal: the reason as the
            // gateway and the npm package name it ("limit", "queue_timeout", ...).
            let body = format!(
                r#"{{"error":"overloaded","reason":"{}"}}"#,
                overloaded.reason().as_str()
            );
            let headers = Headers::new();
            headers.set("retry-after", "1")?;
            headers.set("content-type", "application/json")?;
            Ok(Response::error(body, 503)?.with_headers(headers))
        }
        None if refused.is_expired() => Response::error("deadline", 504),
        None => Response::error(refused.to_string(), 500),
    }
}
