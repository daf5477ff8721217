//! Building responses: JSON bodies, status, headers and `Server-Timing`.

use crate::metrics::{server_timing, Timing};
use core::time::Duration;
use wasm_bindgen::JsValue;

/// `{"error":"<kind>", "<key>": "<value>"...}` with JSON-escaped strings.
pub(crate) fn error_json(kind: &str, fields: &[(&str, &str)]) -> String {
    let mut body = format!("{{\"error\":{}", json_string(kind));
    for (key, value) in fields {
        body.push_str(&format!(",{}:{}", json_string(key), json_string(value)));
    }
    body.push('}');
    body
}

/// A JSON string literal for `text`.
pub(crate) fn json_string(text: &str) -> String {
    js_sys::JSON::stringify(&JsValue::from_str(text))
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_else(|| "\"\"".into())
}

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

    /// The `web_sys::Response`.
    pub(crate) fn into_response(self) -> Result<web_sys::Response, JsValue> {
        let headers = web_sys::Headers::new()?;
        for (name, value) in &self.headers {
            headers.append(name, value)?;
        }
        if self.timings.is_empty() {
            headers.append("server-timing", "admission;dur=0.0")?;
        } else {
            headers.append("server-timing", &server_timing(&self.timings))?;
        }
        let init = web_sys::ResponseInit::new();
        init.set_status(self.status);
        init.set_headers(&headers);
        match self.body {
            Body::Text(text) => web_sys::Response::new_with_opt_str_and_init(Some(&text), &init),
            Body::Stream(stream) => {
                web_sys::Response::new_with_opt_readable_stream_and_init(stream.as_ref(), &init)
            }
        }
    }
}
