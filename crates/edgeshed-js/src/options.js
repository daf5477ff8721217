// Validation of the options JavaScript passes to the npm package's Limiter
// (imported by src/options.rs). Every refusal is a TypeError (wrong type,
// unknown key, missing option) or a RangeError (out of range) whose message
// names the option. Done here rather than in Rust: the messages cost the wasm
// several KiB (docs/benchmarks-log-2026.md, "Size and start-up"), and reading options here crosses into
// JavaScript once per call instead of once per key.
//
// Kinds, ranges, defaults and names come from options-schema.js, rendered
// from the core's options table (src/options_schema.rs): a generic walker
// checks each key against it; the rules across keys are the named functions
// below `limiterOptions`. The call options (`run`, `fetch`, `setLimit`) are
// checked in call-options.js, with the helpers exported here.
import { LIMITER } from "./options-schema.js";

export function describeValue(value) {
  if (value === null) return "null";
  if (typeof value === "number") return String(value);
  return typeof value;
}

export function quoted(value) {
  return typeof value === "string" ? JSON.stringify(value) : describeValue(value);
}

// '"a", "b" or "c"'.
export function names(values) {
  const each = values.map((value) => JSON.stringify(value));
  return each.length < 2 ? each.join("") : `${each.slice(0, -1).join(", ")} or ${each[each.length - 1]}`;
}

export function requireObject(value, what) {
  if (typeof value !== "object" || value === null) {
    throw new TypeError(`${what} must be an object, got ${describeValue(value)}`);
  }
}

function read(object, key, what) {
  try {
    return object[key];
  } catch {
    throw new TypeError(`${what}.${key} could not be read`);
  }
}

// Keys other than `specs`' are refused (they are usually typos such as `maxInflight`).
function rejectUnknownKeys(object, specs, what) {
  for (const key of Object.keys(object)) {
    if (!Object.hasOwn(specs, key)) {
      throw new TypeError(`${what}.${key} is not a known option (expected one of: ${Object.keys(specs).join(", ")})`);
    }
  }
}

// An integer within [spec.min, spec.max].
export function integerValue(value, spec, name) {
  if (typeof value !== "number") throw new TypeError(`${name} must be a number, got ${describeValue(value)}`);
  if (!Number.isInteger(value) || value < spec.min || value > spec.max) {
    throw new RangeError(`${name} must be an integer from ${spec.min} to ${spec.max}, got ${describeValue(value)}`);
  }
  return value;
}

// `value` of the key at `name` checked against its `spec`; an omitted one is
// its default (undefined when it has none).
function checked(value, spec, name) {
  if (value === undefined) {
    if (spec.required) throw new TypeError(`${name} is required${spec.values ? `: ${names(spec.values)}` : ""}`);
    return spec.default;
  }
  switch (spec.kind) {
    case "integer":
      return integerValue(value, spec, name);
    case "fraction":
      if (typeof value !== "number") throw new TypeError(`${name} must be a number, got ${describeValue(value)}`);
      if (!(value >= 0 && value <= 1)) {
        throw new RangeError(`${name} must be a fraction of the limit from 0 to 1, got ${describeValue(value)}`);
      }
      return value;
    case "oneOf":
      if (!spec.values.includes(value)) throw new TypeError(`${name} must be ${names(spec.values)}, got ${quoted(value)}`);
      return value;
    case "section":
      return walk(value, spec.keys, name);
    case "string":
      if (typeof value !== "string") {
        throw new TypeError(`${name} must be a string (${spec.what}), got ${describeValue(value)}`);
      }
      return value;
    default:
      if (!(value instanceof AbortSignal)) throw new TypeError(`${name} must be an AbortSignal, got ${describeValue(value)}`);
      return value;
  }
}

// The keys the caller gave, of a walked object.
const GIVEN = Symbol("given");

// `object` (named `what`) walked against `specs`: unknown keys refused, each
// key checked (read once), defaults filled in, the keys given in `[GIVEN]`.
function walk(object, specs, what) {
  requireObject(object, what);
  rejectUnknownKeys(object, specs, what);
  const values = { [GIVEN]: new Set() };
  for (const key in specs) {
    const value = read(object, key, what);
    if (value !== undefined) values[GIVEN].add(key);
    values[key] = checked(value, specs[key], `${what}.${key}`);
  }
  return values;
}

/**
 * `new Limiter(options)`: [maxInFlight, algorithm, initialLimit, minLimit,
 * maxLimit, maxQueue, queueTimeoutMs, bodyTimeoutMs, reserve.critical,
 * reserve.default (-1: not given), codelTargetMs (0: fifo), rate's count (0: none), its
 * period in seconds, burst, maxKeys, maxQueueWait (1: "auto")]. A fixed limit has algorithm -1; an
 * adaptive one maxInFlight 0 and its algorithm's index. queueTimeoutMs is 0
 * when maxQueue is 0.
 */
export function limiterOptions(options) {
  const o = walk(options, LIMITER, "options");
  exactlyOneLimit(o);
  const adaptive = o.adaptive === undefined ? [-1, 0, 0, 0] : adaptiveBounds(o.adaptive);
  const timeout = boundedQueue(o);
  const reserve = o.reserve === undefined ? [-1, -1] : reserveShares(o.reserve);
  const rate = o.rate === undefined ? [0, 0, 0, 0] : oneRate(o.rate);
  const auto = autoQueueWait(o, timeout);
  return [o.maxInFlight ?? 0, ...adaptive, o.maxQueue, timeout, o.bodyTimeoutMs, ...reserve, codelTarget(o, timeout), ...rate, auto];
}

// `maxQueueWait`: 1 for "auto", which needs a queue (its rule is about a
// waiter's place in it).
function autoQueueWait(o, queueTimeout) {
  if (o.maxQueueWait === LIMITER.maxQueueWait.default) return 0;
  if (queueTimeout === 0) {
    throw new TypeError(`options.maxQueueWait ${quoted(o.maxQueueWait)} needs a queue (options.maxQueue > 0 and options.queueTimeoutMs)`);
  }
  return 1;
}

// Exactly one of `maxInFlight` (a fixed limit) and `adaptive`.
function exactlyOneLimit(o) {
  if (o.maxInFlight !== undefined && o.adaptive !== undefined) {
    throw new TypeError(
      "options.maxInFlight and options.adaptive were both given: give exactly one (a fixed or an adaptive limit)",
    );
  }
  if (o.maxInFlight === undefined && o.adaptive === undefined) {
    throw new TypeError("options.maxInFlight (a fixed limit) or options.adaptive (an adaptive one) is required");
  }
}

// A queue (`maxQueue` > 0) needs its `queueTimeoutMs` (at least 1, by the
// schema): every wait is bounded. Without a queue a `queueTimeoutMs` would
// never apply, so it is refused, as `codelTargetMs` without codel is. The
// timeout in effect: 0 without a queue.
function boundedQueue(o) {
  if (o.maxQueue === 0) {
    if (o[GIVEN].has("queueTimeoutMs")) {
      throw new TypeError("options.queueTimeoutMs needs a queue (options.maxQueue > 0): without one no call waits");
    }
    return 0;
  }
  if (o.queueTimeoutMs === undefined) {
    throw new TypeError("options.queueTimeoutMs is required when options.maxQueue > 0 (every wait must be bounded)");
  }
  return o.queueTimeoutMs;
}

// `reserve`: [critical, default], whose sum is at most 1 (the whole limit).
// Summed in millionths, as the core keeps them (Reserve::new): the same
// reserves pass, and the sum shows as the caller wrote it (0.7 + 0.6 is 1.3,
// not the 1.2999999999999998 of a floating-point sum).
function reserveShares(reserve) {
  const millionths = Math.round(reserve.critical * 1e6) + Math.round(reserve.default * 1e6);
  if (millionths > 1e6) {
    throw new RangeError(
      `options.reserve.critical + options.reserve.default must not exceed 1 (the whole limit), got ${millionths / 1e6}`,
    );
  }
  return [reserve.critical, reserve.default];
}

// `queueDiscipline` and `codelTargetMs`: codel's target in ms, 0 for fifo.
// Codel needs a queue and a target shorter than the queue's timeout;
// `codelTargetMs` is only for codel.
function codelTarget(o, queueTimeout) {
  const given = o[GIVEN].has("codelTargetMs");
  if (o.queueDiscipline === LIMITER.queueDiscipline.default) {
    if (given) throw new TypeError('options.codelTargetMs needs options.queueDiscipline "codel"');
    return 0;
  }
  if (queueTimeout === 0) {
    throw new TypeError(`options.queueDiscipline ${quoted(o.queueDiscipline)} needs a queue (options.maxQueue > 0 and options.queueTimeoutMs)`);
  }
  if (o.codelTargetMs >= queueTimeout) {
    throw new RangeError(
      `options.codelTargetMs (${o.codelTargetMs}${given ? "" : " by default"}) must be shorter than options.queueTimeoutMs (${queueTimeout})`,
    );
  }
  return o.codelTargetMs;
}

// `rate`: [count, period in seconds, burst, maxKeys], with exactly one of
// `perSecond` and `perMinute`; `burst` defaults to one period's calls.
function oneRate(rate) {
  if ((rate.perSecond === undefined) === (rate.perMinute === undefined)) {
    throw new TypeError("options.rate needs exactly one of options.rate.perSecond and options.rate.perMinute");
  }
  const count = rate.perSecond ?? rate.perMinute;
  return [count, rate.perSecond === undefined ? 60 : 1, rate.burst ?? count, rate.maxKeys];
}

// `adaptive`: [algorithm index (into the core's AnyLimit::NAMES, the order of
// the schema's values), initialLimit, minLimit, maxLimit], with minLimit <=
// maxLimit and initialLimit within them; an initialLimit not given is its
// `within` value moved into [minLimit, maxLimit].
function adaptiveBounds(adaptive) {
  const keys = LIMITER.adaptive.keys;
  const { minLimit: min, maxLimit: max } = adaptive;
  if (max < min) {
    throw new RangeError(
      `options.adaptive.minLimit (${min}) must not exceed options.adaptive.maxLimit (${max}; ${keys.maxLimit.default} when not given)`,
    );
  }
  const initial = adaptive.initialLimit ?? Math.min(Math.max(keys.initialLimit.within, min), max);
  if (initial < min || initial > max) {
    throw new RangeError(
      `options.adaptive.initialLimit (${initial}) must lie within [options.adaptive.minLimit, options.adaptive.maxLimit] (${min} to ${max})`,
    );
  }
  return [keys.algorithm.values.indexOf(adaptive.algorithm), initial, min, max];
}
