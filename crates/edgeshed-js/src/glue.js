// JavaScript helpers of the npm package's Limiter (src/*.rs), imported by wasm-bindgen
// as one module (one file in the package, one request in a browser).
// Nothing here may throw into Rust unless its import is marked `catch`.

// --- src/errors.rs ---
/** Rejection of a call refused for lack of capacity (shed or queue timeout). */
export class OverloadedError extends Error {
  constructor(message) {
    super(message);
    this.status = 503;
  }
}
/** Rejection of a call whose deadline (or a body's bodyTimeoutMs) passed. */
export class DeadlineError extends Error {
  constructor(message) {
    super(message);
    this.status = 504;
  }
}
// The name and the default message live on the prototypes, as they do for
// the built-in errors: two property writes fewer per rejection.
Object.defineProperties(OverloadedError.prototype, {
  name: { value: "OverloadedError", writable: true, configurable: true },
  message: { value: "service overloaded", writable: true, configurable: true },
});
Object.defineProperties(DeadlineError.prototype, {
  name: { value: "DeadlineError", writable: true, configurable: true },
  message: { value: "deadline expired", writable: true, configurable: true },
});
// These errors are flow control (503/504), raised by the thousand under
// overload; a stack trace would only point into edgeshed and costs more than
// everything else on the rejection path. Their messages live here, so a
// rejection passes no string out of the wasm.
function withoutStack(make) {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}
export function overloadedError(queueTimeout) {
  // Inline (no closure, no try: the constructor cannot throw): the shed path.
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  const error = new OverloadedError(queueTimeout ? "service overloaded: queue timeout" : undefined);
  Error.stackTraceLimit = limit;
  return error;
}
// A promise rejected with a new OverloadedError: the shed path's one crossing.
export function overloadedRejection(queueTimeout) {
  return Promise.reject(overloadedError(queueTimeout));
}
export function deadlineError() {
  return withoutStack(() => new DeadlineError());
}
export function errorWithStatus(name, message, status) {
  return withoutStack(() => {
    const error = new Error(message);
    error.name = name;
    error.status = status;
    return error;
  });
}

// --- src/call/run.rs ---
// `release(id, rejected, reason)` returns a call's slot; for an adaptive
// limiter it also samples the call, classified in the core from how the work
// settled (a fixed limiter's release ignores the arguments after `id`).
export function releaseWhenSettled(value, id, release) {
  try {
    return Promise.resolve(value).then(
      (fulfilled) => {
        release(id, false);
        return fulfilled;
      },
      (reason) => {
        release(id, true, reason);
        throw reason;
      },
    );
  } catch (error) {
    // A promise whose `constructor` getter throws: never leak the slot.
    release(id, false);
    return Promise.reject(error);
  }
}

export function settleHolding(value, id, release, resolve, reject) {
  let promise;
  try {
    promise = Promise.resolve(value);
  } catch (error) {
    release(id, false);
    reject(error);
    return;
  }
  promise.then(
    (fulfilled) => {
      release(id, false);
      resolve(fulfilled);
    },
    (reason) => {
      release(id, true, reason);
      reject(reason);
    },
  );
}

// --- src/sampling.rs ---
// The facts of a rejection (or a Response) that the core's one
// classification needs (sampling.rs `ending_of`): -1 for a DeadlineError
// (any copy of the class: by name), its `status` if that is a number, else NaN.
export function endingCode(value) {
  try {
    if (value?.name === "DeadlineError") return -1;
    const status = value?.status;
    return typeof status === "number" ? status : NaN;
  } catch {
    return NaN;
  }
}

// --- src/bodies.rs ---
// The bodies' idle clock. (edgeshed-wasm's glue has the same reading for
// JsClock; a wasm-bindgen snippet cannot import another crate's snippet.)
const bodyClock =
  typeof performance !== "undefined" && typeof performance.now === "function"
    ? () => performance.now()
    : () => Date.now();
// Per-Limiter state of the bodies it holds (counted here, where the bodies
// are): `live` maps each held body to its expiry check, `nextCheck` is no
// later than the earliest moment one of them can expire.
export function bodyHolder(timeoutMs) {
  return { timeoutMs, heldBodies: 0, bodyTimeouts: 0, live: new Map(), nextCheck: Infinity };
}
// Expires the bodies idle for timeoutMs. Their own timers do that, except in
// workerd once the request that fetched them is gone (its timers never fire):
// then the next call of any request, or stats(), does it here.
// Returns the count of bodies still held (the wasm skips the call at 0).
export function sweepBodies(holder) {
  if (holder.heldBodies === 0 || bodyClock() < holder.nextCheck) return holder.heldBodies;
  holder.nextCheck = Infinity;
  for (const expire of [...holder.live.values()]) expire();
  return holder.heldBodies;
}
export function holdUntilBodyDone(holder, response, id, releaseId) {
  const release = () => releaseId(id);
  try {
    return holdBody(holder, response, release);
  } catch (error) {
    release();
    throw error;
  }
}
// Frees the slot of a wrapped Response collected unread. Made on first use:
// some hosts have no FinalizationRegistry, or forbid work at module scope.
let collected;
function collectedRegistry() {
  if (collected === undefined) {
    collected = typeof FinalizationRegistry === "function" ? new FinalizationRegistry((free) => free()) : null;
  }
  return collected;
}
// The body is idle while neither the consumer pulls nor the origin delivers
// a chunk; idle for holder.timeoutMs, it is cancelled and its slot freed.
// One timer per body, re-armed lazily from the time of the last progress.
function holdBody(holder, response, release) {
  if (response.body === null) {
    release();
    return response;
  }
  const reader = response.body.getReader();
  const timeoutMs = holder.timeoutMs;
  let released = false;
  let lastProgress = bodyClock();
  let controller;
  let timer;
  const registry = collectedRegistry();
  const finish = () => {
    if (released) return false;
    released = true;
    clearTimeout(timer);
    holder.heldBodies--;
    holder.live.delete(reader);
    registry?.unregister(reader);
    release();
    return true;
  };
  const progress = () => {
    lastProgress = bodyClock();
  };
  const arm = (ms) => {
    timer = setTimeout(expire, ms);
    // Node.js: an idle body must not keep the process alive on its own.
    timer?.unref?.();
  };
  const expire = () => {
    const idle = bodyClock() - lastProgress;
    if (idle < timeoutMs) {
      holder.nextCheck = Math.min(holder.nextCheck, lastProgress + timeoutMs);
      clearTimeout(timer);
      return arm(Math.max(1, Math.ceil(timeoutMs - idle)));
    }
    if (!finish()) return;
    holder.bodyTimeouts++;
    const error = withoutStack(() => new DeadlineError(`response body idle for ${timeoutMs} ms (bodyTimeoutMs)`));
    try {
      controller.error(error);
    } catch {
      // already closed or errored
    }
    cancelQuietly(reader, error);
  };
  const body = new ReadableStream({
    start(c) {
      controller = c;
    },
    async pull(c) {
      progress();
      let chunk;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (finish()) c.error(error);
        return;
      }
      // Cancelled, timed out or collected meanwhile: the stream is done.
      if (released) return;
      progress();
      if (chunk.done) {
        finish();
        c.close();
      } else {
        c.enqueue(chunk.value);
      }
    },
    cancel(reason) {
      finish();
      return reader.cancel(reason);
    },
  });
  const wrapped = new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  holder.heldBodies++;
  holder.live.set(reader, expire);
  holder.nextCheck = Math.min(holder.nextCheck, lastProgress + timeoutMs);
  arm(timeoutMs);
  // Unread and unreachable: free the slot now rather than at the timeout.
  registry?.register(wrapped, () => finish() && cancelQuietly(reader), reader);
  return wrapped;
}
function cancelQuietly(reader, reason) {
  try {
    reader.cancel(reason).catch(() => {});
  } catch {
    // another request's stream (workerd): it cannot be cancelled from here
  }
}

export function withSignal(init, signal) {
  const own = init?.signal;
  const combined = own ? AbortSignal.any([own, signal]) : signal;
  return Object.assign({}, init ?? {}, { signal: combined });
}


// --- src/call/mod.rs ---
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
