// JavaScript helpers of the fleet budget (src/handler/budget/,
// src/handler/admin/budget.rs): calls to the EdgeshedBudget Durable Object.
// Nothing here throws into Rust: every outcome is reported through a
// callback or a promise that settles.

/** `env[name]` if it looks like a Durable Object namespace, else undefined. */
export function namespaceOf(env, name) {
  try {
    const namespace = env?.[name];
    if (namespace && typeof namespace.idFromName === "function" && typeof namespace.get === "function") {
      return namespace;
    }
  } catch {
    // a getter that throws: no usable binding
  }
  return undefined;
}

/**
 * This Worker's deploy version, from Cloudflare's version metadata binding
 * (`[version_metadata] binding = "CF_VERSION_METADATA"`: `{ id, tag,
 * timestamp }`): `{ timestamp: <ms>, id }`, or undefined without the binding.
 * The budget's object applies the configuration of the newest version it
 * hears from (docs/gateway.md, "Fleet budget").
 */
export function versionOf(env) {
  try {
    const metadata = env?.CF_VERSION_METADATA;
    if (metadata === undefined || metadata === null) return undefined;
    const parsed = Date.parse(metadata.timestamp);
    const timestamp = Number.isFinite(parsed) && parsed > 0 ? parsed : 0;
    const id = typeof metadata.id === "string" ? metadata.id.slice(0, 128) : "";
    return { timestamp, id };
  } catch {
    // a binding that throws: no version
    return undefined;
  }
}

/** A fresh id for this isolate's holder (created lazily: not at module scope). */
export function newHolderId() {
  try {
    return crypto.randomUUID();
  } catch {
    return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  }
}

/** A `.retryable` Durable Object error that is not `.overloaded`. */
function retryable(error) {
  try {
    return error?.retryable === true && error?.overloaded !== true;
  } catch {
    return false;
  }
}

/** Whether `error` is a Durable Object's `.overloaded` error. */
function overloaded(error) {
  try {
    return error?.overloaded === true;
  } catch {
    return false;
  }
}

/**
 * Calls `method(...args)` on the object `name` of `namespace`; a
 * `.retryable` error is retried once on a new stub, an `.overloaded` one
 * never (the object is past its soft limit: another call adds to its
 * queue). Rejects (never throws) on failure.
 */
export function callObject(namespace, name, method, args) {
  const attempt = (retried) => {
    let result;
    try {
      const stub = namespace.get(namespace.idFromName(name));
      result = stub[method](...args);
    } catch (error) {
      result = Promise.reject(error);
    }
    return Promise.resolve(result).catch((error) => {
      if (!retried && retryable(error)) return attempt(true);
      throw error;
    });
  };
  return attempt(false);
}

/** `promise`, or a rejection after `ms`; the timer is cleared either way. */
export function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const isCount = (n) => Number.isInteger(n) && n >= 0 && n <= 1_000_000;

/**
 * Calls `method` on the object and reports its outcome once, later (never
 * synchronously), through `report(value)` or `fail(overloaded)`: a throw, a
 * rejection or `timeoutMs` passed (`overloaded`: the object answered an
 * `.overloaded` error). The call is registered with `ctx.waitUntil`, so it
 * completes even when the request that made it has answered.
 */
function callOnce(namespace, name, method, args, timeoutMs, what, report, fail, ctx) {
  let reported = false;
  const once = (fn) => (value) => {
    if (reported) return;
    reported = true;
    try {
      fn(value);
    } catch {
      // the Rust side never throws; nothing more to do
    }
  };
  let settled;
  try {
    const call = callObject(namespace, name, method, args);
    const failed = once((error) => fail(overloaded(error)));
    settled = withTimeout(call, timeoutMs, what).then(once(report), failed);
  } catch {
    settled = Promise.resolve().then(() => once(fail)(false));
  }
  try {
    if (ctx && typeof ctx.waitUntil === "function") ctx.waitUntil(settled);
  } catch {
    // a context that refuses: the call still settles on its own timer
  }
}

/** What every call states besides its numbers: `{ adaptive, version }`. */
function statedParts(stated) {
  try {
    return { adaptive: stated?.adaptive, version: stated?.version };
  } catch {
    return { adaptive: undefined, version: undefined };
  }
}

/**
 * One lease call: `done(ok, [permits, ttlMs, renewMs, epoch], learning,
 * contended, overloaded)` is called exactly once, later, with the grant or
 * `ok = false` on any failure (including a malformed answer; `overloaded`:
 * the object answered `.overloaded`). `numbers`: `[limit, ttlMs, held,
 * inUse, wanted, waitMs, timeoutMs, epoch, served, dropped, rttTotalUs,
 * rttSquares, minRttUs, maxRttUs, maxInFlight, callsMs]` (see budget/calls.rs);
 * `stated`: `{ adaptive, version }`, the budget's `adaptive` section (or
 * undefined) and this Worker's version (`versionOf`, or undefined).
 */
export function callLease(namespace, name, holder, numbers, stated, done, ctx) {
  const [limit, ttlMs, held, inUse, wanted, waitMs, timeoutMs, epoch, ...summary] = numbers;
  const [served, dropped, rttTotalUs, rttSquares, minRttUs, maxRttUs, maxInFlight, callsMs] = summary;
  const report = { served, dropped, rttTotalUs, rttSquares, minRttUs, maxRttUs, maxInFlight };
  const { adaptive, version } = statedParts(stated);
  const request = { limit, ttlMs, adaptive, version, held, inUse, wanted, waitMs, epoch, report, callsMs };
  const fail = (overloaded = false) => done(false, [], false, false, overloaded);
  const ok = (grant) => {
    const valid = isCount(grant?.permits) && Number.isInteger(grant?.ttlMs) && grant.ttlMs > 0
      && typeof grant?.learning === "boolean";
    if (!valid) return fail();
    // an object without `renewMs`, `contended` or `epoch` (an older version)
    const renew = Number.isInteger(grant.renewMs) && grant.renewMs >= 0
      ? grant.renewMs : Math.floor(grant.ttlMs / 4) * 3;
    const answer = [grant.permits, grant.ttlMs, renew, Number.isInteger(grant.epoch) ? grant.epoch : 0];
    done(true, answer, grant.learning, grant.contended === true, false);
  };
  callOnce(namespace, name, "lease", [holder, request], timeoutMs, "lease", ok, fail, ctx);
}

/**
 * One watch: the object keeps it until others need permits (or permits are
 * free for this holder), or `waitMs`. `done(ok, contended, overloaded)` is
 * called exactly once, later. `numbers`: `[limit, ttlMs, waitMs,
 * timeoutMs]`; `stated` as for `callLease`.
 */
export function callWatch(namespace, name, holder, contended, numbers, stated, done, ctx) {
  const [limit, ttlMs, waitMs, timeoutMs] = numbers;
  const ok = (answer) => {
    if (typeof answer?.contended === "boolean") done(true, answer.contended, false);
    else done(false, false, false);
  };
  const fail = (overloaded = false) => done(false, false, overloaded);
  const { adaptive, version } = statedParts(stated);
  const options = { limit, ttlMs, adaptive, version, contended, waitMs };
  callOnce(namespace, name, "watch", [holder, options], timeoutMs, "watch", ok, fail, ctx);
}

/**
 * The fleet view of every budgeted origin: `entries` is
 * `[[origin name, namespace, limit, ttlMs, adaptive], ...]`; resolves (never rejects)
 * to `{ "<name>": { limit, leased, holders, learning } }`, or
 * `{ limit, error: "unavailable", message }` for an object that failed.
 */
export function fleetViews(entries, timeoutMs) {
  const one = ([name, namespace, limit, ttlMs, adaptive]) =>
    withTimeout(callObject(namespace, name, "view", [{ limit, ttlMs, adaptive }]), timeoutMs, "view").then(
      (view) => [name, { limit: view?.limit, leased: view?.leased, holders: view?.holders, learning: view?.learning }],
      (error) => {
        let message = "";
        try {
          message = String(error?.message ?? error);
        } catch {
          // a message that throws
        }
        return [name, { limit, error: "unavailable", message }];
      },
    );
  try {
    return Promise.all(entries.map(one)).then((pairs) => ({ origins: Object.fromEntries(pairs) }));
  } catch {
    return Promise.resolve({ origins: {} });
  }
}

/**
 * Calls `callback()` after `ms`, under `ctx.waitUntil` (the renewal timer
 * of a busy holder: it lives in the context of the request that armed it).
 */
export function later(ctx, ms, callback) {
  try {
    const fired = new Promise((resolve) => {
      setTimeout(() => {
        try {
          callback();
        } finally {
          resolve();
        }
      }, ms);
    });
    if (ctx && typeof ctx.waitUntil === "function") ctx.waitUntil(fired);
  } catch {
    // no timer: the next admission arms another one
  }
}

/** `console.warn(message)`; never throws. */
export function logWarning(message) {
  try {
    console.warn(message);
  } catch {
    // A console that throws must not break the request.
  }
}
