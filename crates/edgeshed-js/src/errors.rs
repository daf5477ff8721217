//! The contract's JavaScript errors.

use edgeshed::admission::AdmitError;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/glue.js")]
extern "C" {
    /// An `Error` with the given `name`, `message` and HTTP-like `status`,
    /// made in JavaScript (one boundary crossing instead of four).
    #[wasm_bindgen(js_name = errorWithStatus)]
    fn error_with_status(name: &str, message: &str, status: u16) -> JsValue;
    /// An `OverloadedError`; its message is made in JavaScript (the shed
    /// path passes no string out of the wasm: measured, see BENCHMARKS.md).
    #[wasm_bindgen(js_name = overloadedError)]
    fn overloaded_error(queue_timeout: bool) -> JsValue;
    /// A promise rejected with an `OverloadedError` (the shed path: one
    /// crossing for the error and its rejection).
    #[wasm_bindgen(js_name = overloadedRejection)]
    fn overloaded_rejection(queue_timeout: bool) -> js_sys::Promise;
    /// A `DeadlineError`, made like [`overloaded_error`].
    #[wasm_bindgen(js_name = deadlineError)]
    fn deadline_error() -> JsValue;
}

/// `OverloadedError` (status 503): shed, or queue timeout.
pub(crate) fn overloaded(queue_timeout: bool) -> JsValue {
    overloaded_error(queue_timeout)
}

/// `DeadlineError` (status 504).
pub(crate) fn deadline() -> JsValue {
    deadline_error()
}

/// Whether an overload was a queue timeout (else a shed).
fn is_queue_timeout(error: &edgeshed::error::Overloaded) -> bool {
    error.cause() == edgeshed::error::OverloadCause::QueueTimeout
}

/// A promise rejected with the JavaScript error for a refused admission.
pub(crate) fn admit_rejection(error: AdmitError) -> js_sys::Promise {
    match error {
        AdmitError::Overloaded(overloaded) => overloaded_rejection(is_queue_timeout(&overloaded)),
        other => js_sys::Promise::reject(&admit_error(other)),
    }
}

/// The JavaScript error for a refused admission.
pub(crate) fn admit_error(error: AdmitError) -> JsValue {
    match error {
        AdmitError::Overloaded(overloaded_error) => overloaded(is_queue_timeout(&overloaded_error)),
        AdmitError::Expired => deadline(),
        AdmitError::Closed => error_with_status("ClosedError", "limiter closed", 503),
        // A refusal added to the core later: still a 503, with its message.
        other => error_with_status("OverloadedError", &other.to_string(), 503),
    }
}

/// A `TypeError` with `message`.
pub(crate) fn type_error(message: &str) -> JsValue {
    js_sys::TypeError::new(message).into()
}

/// A `RangeError` with `message`.
pub(crate) fn range_error(message: &str) -> JsValue {
    js_sys::RangeError::new(message).into()
}
