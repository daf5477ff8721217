//! Building responses: JSON bodies, status, headers and `Server-Timing`.

pub(crate) use crate::failure::error_json;
use crate::failure::{Failure, Scope};
use crate::handler::host::{cancel_stream, make_response};
use crate::metrics::{server_timing, Timing};
use core::time::Duration;
use wasm_bindgen::JsValue;

/// A response under construction.
pub(crate) struct ResponseParts {
    status: u16,
    body: Body,
    headers: Vec<(String, String)>,
    timings: Vec<Timing>,
}

/// What the response carries.
pub(crate) enum Body {
    Text(String),
    Stream(Option<web_sys::ReadableStream>),
}

impl ResponseParts {
    /// A JSON response.
    pub(crate) fn json(status: u16, body: String) -> Self {
        Self {
            status,
            body: Body::Text(body),
            headers: vec![("content-type".into(), "application/json".into())],
            timings: Vec::new(),
        }
    }

    /// The answer to `failure` in `scope` of a request on `route` (the one
    /// table, [`Failure::answer`]; a 429 is scoped to the route), with
    /// `Retry-After` on a 503 or 429.
    pub(crate) fn failure(
        failure: Failure,
        scope: Scope<'_>,
        route: &str,
        retry_after_seconds: u32,
    ) -> Self {
        let answer = failure.answer(failure.scope_in(scope, route));
        let parts = Self::json(answer.status, answer.body);
        if answer.retry_after {
            let seconds = failure.retry_after_seconds(retry_after_seconds);
            parts.header("retry-after", &seconds.to_string())
        } else {
            parts
        }
    }

    /// A plain-text response with the given content type.
    pub(crate) fn text(status: u16, content_type: &str, body: String) -> Self {
        Self {
            status,
            body: Body::Text(body),
            headers: vec![("content-type".into(), content_type.into())],
            timings: Vec::new(),
        }
    }

    /// A streamed response with already-filtered headers.
    pub(crate) fn stream(
        status: u16,
        body: Option<web_sys::ReadableStream>,
        headers: Vec<(String, String)>,
    ) -> Self {
        Self {
            status,
            body: Body::Stream(body),
            headers,
            timings: Vec::new(),
        }
    }

    /// Adds a header.
    pub(crate) fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Adds a `Server-Timing` entry.
    pub(crate) fn timing(mut self, name: &str, duration: Duration) -> Self {
        self.timings.push(Timing {
            name: name.into(),
            duration,
            description: None,
        });
        self
    }

    /// Adds several `Server-Timing` entries.
    pub(crate) fn timings(mut self, timings: impl IntoIterator<Item = Timing>) -> Self {
        self.timings.extend(timings);
        self
    }

    /// The `web_sys::Response`, made in one call into JavaScript (one call
    /// per header and init field was 8 % of the shed path's CPU).
    pub(crate) fn into_response(self) -> Result<web_sys::Response, JsValue> {
        let timing = if self.timings.is_empty() {
            "admission;dur=0.0".to_string()
        } else {
            server_timing(&self.timings)
        };
        // Header names and values never contain a line feed (the Fetch
        // standard refuses them), so one string carries them all.
        let mut lines = String::new();
        for (name, value) in &self.headers {
            lines.push_str(name);
            lines.push('\n');
            lines.push_str(value);
            lines.push('\n');
        }
        lines.push_str("server-timing\n");
        lines.push_str(&timing);
        let (body, held) = match self.body {
            Body::Text(text) => (JsValue::from_str(&text), None),
            Body::Stream(Some(stream)) => (JsValue::from(stream.clone()), Some(stream)),
            Body::Stream(None) => (JsValue::NULL, None),
        };
        let made = make_response(self.status, &body, &lines);
        // A held body no response carries is never read: cancelled, it
        // gives its permits back now, not at its idle timeout.
        if let (Err(_), Some(stream)) = (&made, held) {
            cancel_stream(&stream);
        }
        made
    }
}
