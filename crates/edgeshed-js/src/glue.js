// JavaScript helpers of the npm package's Limiter (src/*.rs), imported by wasm-bindgen
// as one module (one file in the package, one request in a browser).
// Nothing here may throw into Rust unless its import is marked `catch`.
import { CALL } from "./options-schema.js";
import { callFacts, callKey } from "./call-options.js";

// --- src/errors.rs ---
/**
 * Rejection of a call refused for lack of capacity; `reason` says why:
 * "limit" (shed at once), "queue_timeout", "displaced" (from a full queue by
 * a more critical call), "budget", "cleared" (waiting when
 * `limiter.clearQueue()` was called) or "closed" (made after
 * `limiter.close()`).
 */
export class OverloadedError extends Error {
  constructor(message, reason = "limit") {
    super(message);
    this.status = 503;
    this.reason = reason;
  }
}
/**
 * Rejection of a call refused for its key's sake (429): over its fair share
 * (`reason` "fair_share") or its rate limit ("rate", with `retryAfterMs`).
 */
export class RateLimitedError extends Error {
  constructor(message, reason = "rate", retryAfterMs = undefined) {
    super(message);
    this.status = 429;
    this.reason = reason;
    this.retryAfterMs = retryAfterMs;
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
Object.defineProperties(RateLimitedError.prototype, {
  name: { value: "RateLimitedError", writable: true, configurable: true },
  message: { value: "rate limited", writable: true, configurable: true },
});
Object.defineProperties(DeadlineError.prototype, {
  name: { value: "DeadlineError", writable: true, configurable: true },
  message: { value: "deadline expired", writable: true, configurable: true },
});
// These errors are flow control (503/504), raised by the thousand under
// overload. A shed, and the errors of a call with a deadline, get a short
// stack that starts at the caller's `run` / `fetch` call, captured by the
// wrapped entry points (wrapEntryPoints, called by the package's entries)
// once the call has returned from the wasm: V8 in Node.js 20 crashes
// (a fatal deoptimizer error) when a stack is captured with this module's
// wasm frames on it, and frames inside edgeshed would only be noise.
// Capturing a stack costs several times the rest of a shed, so captures are
// budgeted: at most one per millisecond (a shed found while debugging, or
// the one that crashes a process, has its stack; under sustained overload
// most rejections carry only their message). A call that queues keeps its
// call site too (callSite), for its queue timeout: only calls that queue
// pay for it, not those admitted at once (errors.rs `here`). The messages
// are made here, so a rejection passes no string out of the wasm.
function withoutStack(make) {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}
// Frames kept from the caller's call down.
const CALLER_FRAMES = 4;
// Errors and call sites made during the current run/fetch call, waiting for
// the wrapper to give them the caller's stack (a stack: calls nest, when a
// task calls another limiter synchronously). Stays empty until the entries
// wrap the entry points (a test build of the crate).
const unplaced = [];
let wrapped = false;
const clock = typeof performance === "object" && typeof performance.now === "function" ? performance : Date;
let lastStackAt = -Infinity;
/** Whether a stack may be captured now (at most one per millisecond). */
function stackBudget() {
  if (!wrapped) return false;
  const now = clock.now();
  if (now - lastStackAt < 1) return false;
  lastStackAt = now;
  return true;
}
function placeStacks(depth, entry) {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = CALLER_FRAMES;
  while (unplaced.length > depth) Error.captureStackTrace(unplaced.pop(), entry);
  Error.stackTraceLimit = limit;
}
/**
 * Called by the package's entries with `Limiter.prototype`: `run`'s fast
 * start (src/call/free.rs), and a refusal's stack from the caller's call
 * where the engine can capture one (V8).
 */
export function wrapEntryPoints(proto) {
  if (proto.run.wrapped) return;
  const stacks = typeof Error.captureStackTrace === "function";
  wrapped = stacks;
  const { run: limitedRun, fetch: limitedFetch } = proto;
  proto.run = function run(task, options) {
    // A call without a signal or a deadline that finds a free slot:
    // src/call/free.rs. Invalid options take the whole path, which reads
    // them again and rejects.
    if (typeof task === "function") {
      const facts = options === undefined ? NO_OPTIONS : callFacts(options, true);
      if (facts >= 0 && facts < WITHOUT_DEADLINE && (facts & HAS_SIGNAL) === 0) {
        const id = this.__takeFree(facts, (facts & HAS_KEY) === 0 ? undefined : callKey());
        if (id >= 0) return runFree(task, id, (this.__release ??= this.__releaseFree()));
      }
    }
    if (!stacks) return limitedRun.call(this, task, options);
    const depth = unplaced.length;
    let promise;
    try {
      promise = limitedRun.call(this, task, options);
    } catch (error) {
      dropPending(depth);
      throw error;
    }
    if (unplaced.length > depth) placeStacks(depth, run);
    return promise;
  };
  proto.run.wrapped = true;
  if (!stacks) return;
  proto.fetch = function fetch(input, init) {
    const depth = unplaced.length;
    let promise;
    try {
      promise = limitedFetch.call(this, input, init);
    } catch (error) {
      dropPending(depth);
      throw error;
    }
    if (unplaced.length > depth) placeStacks(depth, fetch);
    return promise;
  };
}
// A call that threw synchronously (a freed limiter, a trap, a stack overflow)
// returned nothing its captures belong to: dropped, so that they neither pile
// up nor take the stack of an enclosing call's caller.
function dropPending(depth) {
  if (unplaced.length > depth) unplaced.length = depth;
}
// A criticality's index, here as everywhere in the package (options.rs
// `criticality_at`): its place in the core's Criticality::ALL, most
// important first, which the options table renders as CALL.criticality.values.
const CRITICALITIES = CALL.criticality.values;
// `ceiling` is the most calls of the call's criticality (`rank`) may hold:
// the limit, or less by the reserve kept for more critical calls.
function shedMessage(limit, maxQueue, ceiling, rank) {
  const reached =
    ceiling === limit
      ? `limit ${limit} reached`
      : `the ${CRITICALITIES[rank]} calls' share of limit ${limit} (${ceiling}, the rest reserved for more critical calls) reached`;
  return maxQueue === 0
    ? `service overloaded: ${reached}, maxQueue 0: shed at once`
    : `service overloaded: ${reached} and the queue full (maxQueue ${maxQueue}): shed at once`;
}
// A promise rejected with a new OverloadedError for a call shed at once:
// the shed path's one crossing.
export function shedRejection(limit, maxQueue, ceiling, rank) {
  // The message of the last shed, kept while the four facts stay the same
  // (a limit that sheds, sheds many calls in a row with the same message).
  if (limit !== shed.limit || maxQueue !== shed.maxQueue || ceiling !== shed.ceiling || rank !== shed.rank) {
    shed.message = shedMessage(limit, maxQueue, ceiling, rank);
    shed.limit = limit;
    shed.maxQueue = maxQueue;
    shed.ceiling = ceiling;
    shed.rank = rank;
  }
  // Inline (no closure, no try: the constructor cannot throw).
  const stackLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  const error = new OverloadedError(shed.message);
  Error.stackTraceLimit = stackLimit;
  if (stackBudget()) unplaced.push(error);
  return rejectAfterAwait(error);
}
const shed = { limit: -1, maxQueue: -1, ceiling: -1, rank: -1, message: "" };
const SETTLED = Promise.resolve();
// A promise that rejects with `error` one microtask from now, once the
// caller's `await` or `.catch` is attached: Node.js then has no rejection to
// track as unhandled and later handled, which was a fifth of a shed's time
// (process/promises `handledRejection`, CPU profile of the shed path).
// Still reported as unhandled if nobody ever handles it.
function rejectAfterAwait(error) {
  return SETTLED.then(() => {
    throw error;
  });
}
// A RateLimitedError: "fair_share" when `retryAfterMs` < 0, else "rate".
// For a call refused later, with the stack of `site` (rateLimitedErrorAt);
// for one refused at once, a promise rejected with it (rateLimitedRejection).
function rateLimited(limit, retryAfterMs) {
  return retryAfterMs < 0
    ? new RateLimitedError(
        `rate limited: this key holds more than its fair share of limit ${limit} while other keys wait`,
        "fair_share",
      )
    : new RateLimitedError(`rate limited: over the rate limit; retry after ${retryAfterMs} ms`, "rate", retryAfterMs);
}
export function rateLimitedErrorAt(site, limit, retryAfterMs) {
  return inheritStack(
    withoutStack(() => rateLimited(limit, retryAfterMs)),
    site,
  );
}
export function rateLimitedRejection(limit, retryAfterMs) {
  const error = withoutStack(() => rateLimited(limit, retryAfterMs));
  if (stackBudget()) unplaced.push(error);
  return Promise.reject(error);
}
/** Where a call was made, for an error raised later from a timer. */
export function callSite() {
  const site = {};
  if (stackBudget()) unplaced.push(site);
  return site;
}
// `error.stack` is `site`'s frames under the error's own first line, made
// when first read (most rejections under overload are never printed).
function inheritStack(error, site) {
  if (site?.stack === undefined) return error;
  Object.defineProperty(error, "stack", {
    configurable: true,
    get() {
      const frames = String(site.stack);
      const at = frames.indexOf("\n");
      const stack = `${this.name}: ${this.message}${at < 0 ? "" : frames.slice(at)}`;
      Object.defineProperty(this, "stack", { value: stack, writable: true, configurable: true });
      return stack;
    },
    set(value) {
      Object.defineProperty(this, "stack", { value, writable: true, configurable: true });
    },
  });
  return error;
}
const CLOSED_MESSAGE = "service overloaded: the limiter is closed (limiter.close()): it starts no new call";
// A promise rejected with the OverloadedError of a call made after
// `limiter.close()` (its stack as for a shed).
export function closedRejection() {
  const error = withoutStack(() => new OverloadedError(CLOSED_MESSAGE, "closed"));
  if (stackBudget()) unplaced.push(error);
  return Promise.reject(error);
}
// Index = the cause's number in src/errors.rs (EXPECTED_WAIT_TOO_LONG,
// CLEARED and CLOSED there).
const OVERLOAD_REASONS = ["limit", "queue_timeout", "displaced", "budget", "queue_timeout", "cleared", "closed"];
function overloadMessage(cause, limit, maxQueue, timeoutMs) {
  switch (cause) {
    case 1:
      return `service overloaded: waited queueTimeoutMs ${timeoutMs} for a slot of limit ${limit} (maxQueue ${maxQueue}): queue timeout`;
    case 2:
      return `service overloaded: displaced from the full queue (maxQueue ${maxQueue}) by a more critical call`;
    case 3:
      return "service overloaded: no fleet budget left";
    case 4:
      return `service overloaded: the expected wait for a slot of limit ${limit} (maxQueue ${maxQueue}) is longer than one service time (maxQueueWait "auto"): queue timeout`;
    case 5:
      return "service overloaded: the queue was cleared (limiter.clearQueue()) while this call waited for a slot";
    case 6:
      return CLOSED_MESSAGE;
    default:
      return shedMessage(limit, maxQueue, limit, 1);
  }
}
export function overloadedErrorAt(site, cause, limit, maxQueue, timeoutMs) {
  const message = overloadMessage(cause, limit, maxQueue, timeoutMs);
  return inheritStack(
    withoutStack(() => new OverloadedError(message, OVERLOAD_REASONS[cause] ?? "limit")),
    site,
  );
}
export function deadlineErrorAt(site, deadlineMs, running) {
  const message = `deadline expired: deadlineMs ${deadlineMs} passed while ${running ? "running" : "queued"}`;
  return inheritStack(
    withoutStack(() => new DeadlineError(message)),
    site,
  );
}
export function errorWithStatus(name, message, status) {
  return withoutStack(() => {
    const error = new Error(message);
    error.name = name;
    error.status = status;
    return error;
  });
}

// --- src/lifecycle.rs ---
// The promises of `onIdle()` and `close()`: each one's resolve function
// waits in the limiter's array until the limiter is idle.
export function idlePromise(resolves, idle) {
  return idle ? Promise.resolve() : new Promise((resolve) => resolves.push(resolve));
}
export function resolveAll(resolves) {
  for (const resolve of resolves.splice(0)) resolve();
}

// --- src/stats.rs ---
// `stats()` is laid out by stats.rs's one table: its paths come here once
// (statsLayout), then each call's numbers in the same order (statsObject).
/** The table's paths ("a", "a.b.c", "list[]", "object?", "flag!"), parsed once. */
export function statsLayout(paths) {
  return paths.split(" ").map((path) => {
    if (path.endsWith("[]")) return { list: path.slice(0, -2) };
    if (path.endsWith("?")) return { maybe: path.slice(0, -1) };
    const parts = (path.endsWith("!") ? path.slice(0, -1) : path).split(".");
    parts.flag = path.endsWith("!");
    return parts;
  });
}
/**
 * The stats object: `v`'s numbers put where `layout` says; a list of refused
 * keys takes its length from `v`, then `refused` and `overcount` per key,
 * whose `key` (its first bytes, or null for the calls without one) is `keys`';
 * an "object?" is null when its number is 0 (its fields' numbers follow); a
 * "flag!" is true for any number but 0.
 */
export function statsObject(layout, v, keys) {
  const stats = {};
  const absent = [];
  let at = 0;
  for (const path of layout) {
    if (path.maybe !== undefined) {
      if (v[at++] === 0) absent.push(path.maybe);
      continue;
    }
    if (path.list !== undefined) {
      const list = [];
      const n = v[at++];
      for (let k = 0; k < n; k++) list.push({ key: keys[k], refused: v[at++], overcount: v[at++] });
      stats[path.list] = list;
      continue;
    }
    let into = stats;
    const last = path.length - 1;
    for (let i = 0; i < last; i++) into = into[path[i]] ??= {};
    // A "flag!" is a boolean, sent as 1 or 0.
    into[path[last]] = path.flag ? v[at++] !== 0 : v[at++];
  }
  for (const name of absent) stats[name] = null;
  return stats;
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

// callFacts's number (call-options.js): no options at all; the facts of
// options without a deadline are below WITHOUT_DEADLINE; the signal's and
// the key's bits.
const NO_OPTIONS = 3;
const WITHOUT_DEADLINE = 16 * CALL.fairWeight.max;
const HAS_SIGNAL = 4;
const HAS_KEY = 8;
// `run(fn)` admitted by `__takeFree` (src/call/free.rs): what call_holding
// (run.rs) does for the whole path, here without crossing into the wasm until
// the release.
function runFree(task, id, release) {
  let returned;
  try {
    returned = task();
  } catch (error) {
    release(id, true, error);
    return Promise.reject(error);
  }
  if (returned === null || (typeof returned !== "object" && typeof returned !== "function")) {
    release(id, false);
    return Promise.resolve(returned);
  }
  return releaseWhenSettled(returned, id, release);
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
// The reason a body idle for bodyTimeoutMs is cut with (edgeshed-wasm's
// holdBody calls it): a later read rejects with it.
export function bodyIdleError(timeoutMs) {
  return withoutStack(() => new DeadlineError(`response body idle for ${timeoutMs} ms (bodyTimeoutMs)`));
}
