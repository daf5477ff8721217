// JavaScript helpers of edgeshed-wasm's runtime, imported by wasm-bindgen
// as one module; their bindings are all in src/host/js.rs.
// Nothing here may throw into Rust unless its import is marked `catch`.

// --- src/abort.rs ---
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

// --- src/fetch.rs ---
export function globalFetch(input, init) {
  return fetch(input, init);
}


// --- src/task/ ---
export function inWorkerd() {
  return typeof navigator !== "undefined" && navigator.userAgent === "Cloudflare-Workers";
}

// --- src/task/ ---
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

// --- src/settled.rs ---
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

// --- src/clock.rs ---
export const monotonicNow =
  typeof performance !== "undefined" && typeof performance.now === "function"
    ? () => performance.now()
    : () => Date.now();
// The wall clock in ms since the Unix epoch, on the monotonic clock's time
// line (performance.timeOrigin + performance.now(), read at each call), or
// Date.now() where there is no time origin (workerd, whose performance.now()
// already is Date.now()). Never throws.
export function wallNow() {
  try {
    const origin = typeof performance !== "undefined" ? performance.timeOrigin : undefined;
    if (typeof origin === "number" && origin > 0) return origin + monotonicNow();
    return Date.now();
  } catch {
    return NaN;
  }
}
