//! A route's own admission, before any limit: its requests' criticality
//! and key (read from their headers, [`crate::classify`]) and its rate
//! limit — per isolate (a GCRA on the JS clock) or Cloudflare's Rate
//! Limiting binding — with the `RateLimit` headers of its responses.

use crate::classify::{criticality, key_value, CRITICALITY_HEADER};
use crate::config::{Config, ConfigError, KeySource, RateLimit, Route};
use crate::handler::host::{rate_limit_allows, rate_limiter_of};
use crate::metrics::RouteMetrics;
use crate::rate_headers;
use core::cell::Cell;
use core::time::Duration;
use edgeshed::admission::Call;
use edgeshed::error::RateLimited;
use edgeshed::rate_limit::{Rate, RateLimiter};
use edgeshed::Key;
use edgeshed_wasm::settled::Settled;
use edgeshed_wasm::JsClock;
use wasm_bindgen::prelude::*;

/// The rate limit of one route in this isolate.
enum RouteRate {
    /// No `rateLimit`.
    None,
    /// `perSecond`/`perMinute`: GCRA per key on the JS clock.
    Local(RateLimiter<JsClock, Key>, Rate),
    /// `binding`: asked per request; `refused` counts its refusals.
    Binding {
        binding: JsValue,
        period: Duration,
        refused: Cell<u64>,
    },
}

/// A route's runtime: its rate limit, if any.
pub(crate) struct RouteRuntime {
    rate: RouteRate,
}

/// What a request of a route brings to admission.
pub(crate) struct Classified {
    /// Its criticality and fairness key, for every limit it passes.
    pub(crate) call: Call,
    /// The value of the key its rate is counted for (hashed where it is
    /// counted: keyed per isolate here, SHA-256 for the binding, which
    /// counts across isolates).
    rate_key: Option<String>,
}

/// What every limit a request passes needs to know of it: its call (its
/// criticality and fairness key) and its route's `path` or `prefix` (where
/// a 429 is scoped).
#[derive(Clone, Copy)]
pub(crate) struct Admitting<'r> {
    pub(crate) call: &'r Call,
    pub(crate) route: &'r str,
}

/// The `RateLimit-Policy` and `RateLimit` headers of a response, in that
/// order.
pub(crate) type RateHeaders = Option<[(&'static str, String); 2]>;

/// A header of `request`, if readable.
fn header(request: &web_sys::Request, name: &str) -> Option<String> {
    request.headers().get(name).ok().flatten()
}

/// The value of `request`'s key from `source` (trimmed, not blank).
fn key_of(request: &web_sys::Request, source: Option<&KeySource>) -> Option<String> {
    let value = header(request, source?.header())?;
    key_value(Some(&value)).map(str::to_owned)
}

/// Every route's runtime, in `config.routes` order. A rate-limit binding
/// that `env` lacks is a configuration error naming its key.
pub(crate) fn runtimes(env: &JsValue, config: &Config) -> Result<Vec<RouteRuntime>, ConfigError> {
    let mut errors = Vec::new();
    let mut routes = Vec::new();
    for (index, route) in config.routes.iter().enumerate() {
        let rate = match &route.admission().rate_limit {
            None => RouteRate::None,
            Some(RateLimit::Local { rate, .. }) => {
                RouteRate::Local(RateLimiter::new(*rate, JsClock), *rate)
            }
            Some(RateLimit::Binding {
                binding, period, ..
            }) => {
                let found = rate_limiter_of(env, binding);
                if found.is_undefined() {
                    errors.push(format!(
                        "routes[{index}].rateLimit.binding: env has no Rate Limiting binding \"{binding}\" \
                         (declare it in wrangler.toml [[ratelimits]])"
                    ));
                }
                RouteRate::Binding {
                    binding: found,
                    period: *period,
                    refused: Cell::new(0),
                }
            }
        };
        routes.push(RouteRuntime { rate });
    }
    if errors.is_empty() {
        Ok(routes)
    } else {
        Err(ConfigError::all(errors))
    }
}

impl RouteRuntime {
    /// What `request` on `route` brings: the route's criticality, lowered by
    /// its `edgeshed-criticality` header; its fairness key and rate key.
    pub(crate) fn classify(route: &Route, request: &web_sys::Request) -> Classified {
        let admission = route.admission();
        let asked = header(request, CRITICALITY_HEADER);
        edgeshed_wasm::seed_keys();
        let fairness = admission.fairness.as_ref();
        let fairness_key = key_of(request, fairness.map(|fair| &fair.key));
        let weight = match (fairness, &fairness_key) {
            (Some(fair), Some(value)) => fair.weights.of(value),
            _ => 1,
        };
        let call = Call::new(criticality(admission.criticality(), asked.as_deref()))
            .with_optional_key(fairness_key.as_deref().map(Key::from))
            .with_weight(weight);
        let rate_key = match &admission.rate_limit {
            Some(RateLimit::Local { key, .. } | RateLimit::Binding { key, .. }) => {
                key_of(request, key.as_ref())
            }
            None => None,
        };
        Classified { call, rate_key }
    }

    /// Checks the route's rate limit for `classified`: the headers every
    /// response of the route carries, or the refusal (and its headers).
    pub(crate) async fn check(
        &self,
        classified: &Classified,
    ) -> Result<RateHeaders, (RateLimited, RateHeaders)> {
        match &self.rate {
            RouteRate::None => Ok(None),
            RouteRate::Local(limiter, rate) => {
                let checked = match &classified.rate_key {
                    Some(value) => limiter.check_key(&Key::from(value)),
                    None => limiter.check(),
                };
                let policy = || rate_headers::policy(rate);
                match checked {
                    Ok(allowance) => {
                        let now = rate_headers::current(allowance.remaining(), allowance.reset());
                        Ok(Some([("ratelimit-policy", policy()), ("ratelimit", now)]))
                    }
                    Err(limited) => {
                        let wait = limited.retry_after().unwrap_or_default();
                        let now = rate_headers::current(0, wait);
                        Err((
                            limited,
                            Some([("ratelimit-policy", policy()), ("ratelimit", now)]),
                        ))
                    }
                }
            }
            RouteRate::Binding {
                binding,
                period,
                refused,
            } => {
                let key = classified.rate_key.as_deref().unwrap_or_default();
                let allowed = Settled::new(rate_limit_allows(binding, key)).await;
                if allowed.map_or(true, |value| value.as_bool() != Some(false)) {
                    return Ok(None);
                }
                refused.set(refused.get() + 1);
                Err((RateLimited::rate(*period), None))
            }
        }
    }

    /// The route's numbers, if it has a rate limit.
    pub(crate) fn metrics<'a>(&self, route: &'a Route) -> Option<RouteMetrics<'a>> {
        let (rate_limited, rate_overflow) = match &self.rate {
            RouteRate::None => return None,
            RouteRate::Local(limiter, _) => {
                let stats = limiter.stats();
                (stats.limited, stats.overflow)
            }
            RouteRate::Binding { refused, .. } => (refused.get(), 0),
        };
        Some(RouteMetrics {
            route: route.key(),
            rate_limited,
            rate_overflow,
        })
    }
}

/// Adds `headers` to `response` (its headers are the gateway's own, so
/// mutable; a refusal is ignored).
pub(crate) fn add_headers(response: &web_sys::Response, headers: &RateHeaders) {
    for (name, value) in headers.iter().flatten() {
        let _ = response.headers().set(name, value);
    }
}

/// Adds the headers of a passed rate check to `response`, the answer of
/// what came after it: `RateLimit-Policy` always, but `RateLimit` (calls
/// left now) only when `response` has no `Retry-After`. A response with one
/// was refused by something other than the rate limit (a fair-share 429,
/// an overload 503, or the origin's own answer): its `Retry-After` says
/// when to come back, and a quota with calls left beside it would say the
/// opposite.
pub(crate) fn add_passed_headers(response: &web_sys::Response, headers: &RateHeaders) {
    let Some([policy, current]) = headers else {
        return;
    };
    let _ = response.headers().set(policy.0, &policy.1);
    if !response.headers().has("retry-after").unwrap_or(true) {
        let _ = response.headers().set(current.0, &current.1);
    }
}
