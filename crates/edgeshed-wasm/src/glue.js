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
export function withSignal(init, signal) {
  const own = init?.signal;
  const combined = own ? AbortSignal.any([own, signal]) : signal;
  return Object.assign({}, init ?? {}, { signal: combined });
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
// 16 random bytes: the secret keys are hashed with (src/keys.rs). Lazily,
// never at module scope (workerd refuses randomness there); Math.random
// only if WebCrypto refuses.
export function randomSecret() {
  const bytes = new Uint8Array(16);
  try { crypto.getRandomValues(bytes); } catch { bytes.forEach((_, i) => { bytes[i] = Math.random() * 256; }); }
  return bytes;
}

// --- src/body.rs ---
// Per-holder state of the bodies it holds: `live` maps each to its expiry
// check, `nextCheck` is no later than the earliest moment one can expire.
export function bodyHolder() {
  return { heldBodies: 0, bodyTimeouts: 0, live: new Map(), nextCheck: Infinity };
}
// Expires the bodies idle for their timeout. Their own timers do that,
// except in workerd once the request that made them is gone (its timers
// never fire): then a later call (of any request) does it here. Returns the
// count of bodies still held.
export function sweepBodies(holder) {
  if (holder.heldBodies === 0 || monotonicNow() < holder.nextCheck) return holder.heldBodies;
  holder.nextCheck = Infinity;
  for (const expire of [...holder.live.values()]) expire();
  return holder.heldBodies;
}
// Frees the hold of a wrapped Response collected unread. Made on first use:
// some hosts have no FinalizationRegistry, or forbid work at module scope.
let collected;
function collectedRegistry() {
  if (collected === undefined) {
    collected = typeof FinalizationRegistry === "function" ? new FinalizationRegistry((free) => free()) : null;
  }
  return collected;
}
// Holds `release(id)` until the body of `response` is done: read to the end,
// cancelled, errored, or (workerd) its client went away; or until no chunk
// moved through it for idleMs (an origin gone silent, or a consumer that
// stopped reading: nothing is read from the origin then); or, with `wrap`, until the
// returned Response is collected unread. Returns the body as a new stream
// (`wrap`: in a copy of the Response), null for a response without a body
// (released at once). release(id, how) runs exactly once, also when this
// throws; `how` says how the body ended (BODY_READ, BODY_FAILED, BODY_LEFT),
// for a caller that times the call to its body's end.
export function holdBody(holder, response, idleMs, host, idleReason, release, id, wrap) {
  let done = false;
  const once = (how = BODY_LEFT) => {
    if (done) return false;
    done = true;
    release(id, how);
    return true;
  };
  try {
    const body = response.body;
    if (body === null) {
      once(BODY_READ);
      return wrap ? response : null;
    }
    return pipeHeld(holder, response, body, idleMs, host, idleReason, once, wrap);
  } catch (error) {
    once();
    throw error;
  }
}
// How a held body ended: read to its end; failed as the origin sent it;
// left otherwise (cancelled, cut idle, collected unread, its client gone).
const BODY_READ = 0;
const BODY_FAILED = 1;
const BODY_LEFT = 2;
// The declared length a relayed body keeps (FixedLengthStream): its
// content-length, unless it was decoded on the way (content-encoding).
function declaredLength(headers) {
  if (headers.get("content-encoding") !== null) return -1;
  const length = Number(headers.get("content-length")?.trim() || NaN);
  return Number.isSafeInteger(length) && length >= 0 ? length : -1;
}
function pipeHeld(holder, response, body, idleMs, host, idleReason, release, wrap) {
  const key = {};
  const registry = wrap ? collectedRegistry() : null;
  let last = monotonicNow();
  // The controllers of the streams we own, errored to cut the body.
  const controllers = [];
  let timer;
  const finish = (how) => {
    if (!release(how)) return false;
    clearTimeout(timer);
    holder.heldBodies--;
    holder.live.delete(key);
    registry?.unregister(key);
    return true;
  };
  // Errors the streams we own: the pipe then cancels the origin's body
  // without waiting for a write the consumer never takes.
  const cut = (reason) => {
    for (const controller of controllers) {
      try {
        controller.error(reason);
      } catch {
        // already done, or another request's stream (workerd)
      }
    }
  };
  const arm = (ms) => {
    timer = setTimeout(expire, ms);
    // Node.js: an idle body must not keep the process alive on its own.
    timer?.unref?.();
  };
  // One timer per body, re-armed lazily from the time of the last chunk.
  // (Called by the sweep too: it must not throw.)
  const expire = () => {
    try {
      const quiet = monotonicNow() - last;
      if (quiet < idleMs) {
        holder.nextCheck = Math.min(holder.nextCheck, last + idleMs);
        clearTimeout(timer);
        return arm(Math.max(1, Math.ceil(idleMs - quiet)));
      }
      if (!finish()) return;
      holder.bodyTimeouts++;
      cut(idleReason ? idleReason(idleMs) : new Error(`response body idle for ${idleMs} ms`));
    } catch {
      // a host that refused the timer, or a reason that threw: the hold is
      // freed (or left to the next sweep) all the same
    }
  };
  const moved = () => {
    last = monotonicNow();
  };
  holder.heldBodies++;
  holder.live.set(key, expire);
  try {
    return relay(response, body, host, moved, controllers, finish, cut, () => {
      holder.nextCheck = Math.min(holder.nextCheck, last + idleMs);
      arm(idleMs);
    }, wrap, registry, key);
  } catch (error) {
    finish();
    throw error;
  }
}
// Pipes `body` into a stream of ours and returns its readable side, or a
// Response of it (`wrap`).
function relay(response, body, host, moved, controllers, finish, cut, start, wrap, registry, key) {
  let source = body;
  let out;
  if (!wrap && typeof IdentityTransformStream === "function") {
    // workerd, a body for the client: a pipe into workerd's own stream fails
    // when the client goes away. A declared length is kept, so a client can
    // tell a body cut short. (A Response for user code keeps a JavaScript
    // stream: workerd cannot pipe one of its streams into another, as code
    // relaying the body through an IdentityTransformStream does. Under
    // waitUntil its pipe still settles once workerd drops a vanished
    // client's response.)
    const length = declaredLength(response.headers);
    out = length >= 0 && typeof FixedLengthStream === "function" ? new FixedLengthStream(length) : new IdentityTransformStream();
    const watch = { start: (c) => void controllers.push(c), transform: (chunk, c) => (moved(), c.enqueue(chunk)) };
    source = body.pipeThrough(new TransformStream(watch));
  } else {
    out = pullThrough(body, moved, controllers, finish);
  }
  const piped = out.done ?? source.pipeTo(out.writable).then(() => finish(BODY_READ), () => finish(BODY_LEFT));
  try {
    host?.waitUntil?.(piped);
  } catch {
    // outside a request (workerd), or a context that refuses: the timer and
    // the sweep still end the hold
  }
  start();
  if (!wrap) return out.readable;
  const { status, statusText, headers } = response;
  const wrapped = new Response(out.readable, { status, statusText, headers });
  // Unread and unreachable: free the hold now rather than at the timeout.
  registry?.register(wrapped, () => finish() && cut(new Error("response collected unread")), key);
  return wrapped;
}
// The body as a stream of ours that pulls one chunk from `body` each time
// the consumer reads (highWaterMark 0): an unread body is never read from,
// so it keeps its hold, where a buffering relay would finish a small body
// with nothing read. `done` settles when the hold ends (waitUntil keeps a
// workerd request alive for it, so a client that goes away cancels the
// stream and frees the hold). A cut errors the stream and cancels `body`.
// (A pull per chunk instead of a pipe through a writable: a third of the
// relay's cost per fetch in Node, benches/node/fetch.mjs.)
function pullThrough(body, moved, controllers, finish) {
  const reader = body.getReader();
  let settle;
  const done = new Promise((resolve) => (settle = resolve));
  const end = (how) => (finish(how), settle());
  const readable = new ReadableStream({
    start: (c) => void controllers.push(c),
    async pull(c) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (error) {
        end(BODY_FAILED);
        return c.error(error);
      }
      if (chunk.done) return end(BODY_READ), c.close();
      moved();
      c.enqueue(chunk.value);
    },
    cancel: (reason) => (end(BODY_LEFT), reader.cancel(reason).catch(() => {})),
  }, { highWaterMark: 0 });
  controllers.push({ error: (reason) => (settle(), reader.cancel(reason).catch(() => {})) });
  return { readable, done };
}
