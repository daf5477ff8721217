//! `Limiter.fetch`: the permit is held until the response body is done.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = r#"
export function holdUntilBodyDone(response, release) {
  try {
    return holdBody(response, release);
  } catch (error) {
    release();
    throw error;
  }
}
function holdBody(response, release) {
  if (response.body === null) {
    release();
    return response;
  }
  const reader = response.body.getReader();
  let released = false;
  const finish = () => {
    if (!released) {
      released = true;
      release();
    }
  };
  const body = new ReadableStream({
    async pull(controller) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (error) {
        finish();
        controller.error(error);
        return;
      }
      if (chunk.done) {
        finish();
        controller.close();
      } else {
        controller.enqueue(chunk.value);
      }
    },
    cancel(reason) {
      finish();
      return reader.cancel(reason);
    },
  });
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

export function globalFetch(input, init) {
  return fetch(input, init);
}

export function withSignal(init, signal) {
  const own = init?.signal;
  const combined = own ? AbortSignal.any([own, signal]) : signal;
  return Object.assign({}, init ?? {}, { signal: combined });
}
"#)]
extern "C" {
    /// Wraps `response` so that `release` runs once its body has been read
    /// to the end, errored or been cancelled (at once if it has no body).
    #[cfg(feature = "js")]
    /// A synchronous throw (after `release` ran) becomes `Err`.
    #[wasm_bindgen(js_name = holdUntilBodyDone, catch)]
    pub(crate) fn hold_until_body_done(
        response: &JsValue,
        release: JsValue,
    ) -> Result<JsValue, JsValue>;

    /// The host's `fetch`; a synchronous throw becomes `Err`.
    #[wasm_bindgen(js_name = globalFetch, catch)]
    pub(crate) fn global_fetch(input: &JsValue, init: &JsValue)
        -> Result<js_sys::Promise, JsValue>;

    /// A copy of `init` whose `signal` also aborts when `signal` does.
    #[cfg(feature = "js")]
    #[wasm_bindgen(js_name = withSignal, catch)]
    pub(crate) fn with_signal(
        init: &JsValue,
        signal: &web_sys::AbortSignal,
    ) -> Result<JsValue, JsValue>;
}
