// JavaScript helpers of the JS face (src/js/*.rs), imported by wasm-bindgen
// as one module (one file in the package, one request in a browser).
// Nothing here may throw into Rust unless its import is marked `catch`.

// --- src/js/errors.rs ---
export function errorWithStatus(name, message, status) {
  // These errors are flow control (503/504), raised by the thousand under
  // overload; a stack trace would only point into edgeshed and costs more
  // than everything else on the rejection path.
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  const error = new Error(message);
  Error.stackTraceLimit = limit;
  error.name = name;
  error.status = status;
  return error;
}

// --- src/js/limiter.rs ---
export function releaseWhenSettled(value, id, release) {
  try {
    return Promise.resolve(value).finally(() => release(id));
  } catch (error) {
    // A promise whose `constructor` getter throws: never leak the slot.
    release(id);
    return Promise.reject(error);
  }
}

export function settleHolding(value, id, release, resolve, reject) {
  let promise;
  try {
    promise = Promise.resolve(value);
  } catch (error) {
    release(id);
    reject(error);
    return;
  }
  promise.then(
    (fulfilled) => {
      release(id);
      resolve(fulfilled);
    },
    (reason) => {
      release(id);
      reject(reason);
    },
  );
}

// --- src/js/abort.rs ---
export function abortReason(signal) {
  try {
    return signal.aborted ? { reason: signal.reason } : undefined;
  } catch {
    return undefined;
  }
}
export function onAbort(signal, callback) {
  const listener = () => {
    let reason;
    try {
      reason = signal.reason;
    } catch {
      // unreadable from here: aborted all the same
    }
    callback({ reason });
  };
  try {
    signal.addEventListener("abort", listener, { once: true });
  } catch {
    // a signal of another request (workerd): it cannot be watched from here
  }
  return listener;
}
export function offAbort(signal, listener) {
  try {
    signal.removeEventListener("abort", listener);
  } catch {
    // as in onAbort
  }
}

// --- src/js/fetch.rs ---
export function holdUntilBodyDone(response, id, releaseId) {
  const release = () => releaseId(id);
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

// --- src/js/task/ ---
export function inWorkerd() {
  return typeof navigator !== "undefined" && navigator.userAgent === "Cloudflare-Workers";
}

// --- src/js/task/ ---
export function guarded(callback, label, recover) {
  return (argument) => {
    try {
      callback(argument);
    } catch (error) {
      console.error(`edgeshed: an exception unwound through a task step (${label}):`, error);
      recover();
    }
  };
}
export function thenCall(promise, callback) { promise.then(callback); }
export function inOwnContext(signal) {
  try {
    return typeof signal.aborted === "boolean";
  } catch {
    return false;
  }
}

// --- src/js/options.rs ---
export function describeValue(value) {
  if (value === null) return "null";
  if (typeof value === "number") return String(value);
  return typeof value;
}

// --- src/js/settled.rs ---
export function watchSettled(value, id, onSettled) {
  let promise;
  try {
    promise = Promise.resolve(value);
  } catch (error) {
    onSettled(id, false, error);
    return;
  }
  promise.then(
    (fulfilled) => onSettled(id, true, fulfilled),
    (reason) => onSettled(id, false, reason),
  );
}

// --- src/js/clock.rs ---
export const monotonicNow =
  typeof performance !== "undefined" && typeof performance.now === "function"
    ? () => performance.now()
    : () => Date.now();

// --- src/js/call/mod.rs ---
export function releaseOnSettle(value, id, release) {
  // The slot of abandoned work: back when the work settles, whatever its
  // outcome (the caller has been answered already; nothing may reject here).
  const done = () => release(id);
  try {
    Promise.resolve(value).then(done, done);
  } catch {
    done();
  }
}
