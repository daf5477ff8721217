// Validation of the options JavaScript passes to the npm package's Limiter
// (imported by src/options.rs). Every refusal is a TypeError (wrong type,
// unknown key, missing option) or a RangeError (out of range) whose message
// names the option. Done here rather than in Rust: the messages cost the wasm
// several KiB (docs/benchmarks-log-2026.md, "Size and start-up"), and reading options here crosses into
// JavaScript once per call instead of once per key.

const MAX_COUNT = 1_000_000;
// The largest millisecond value: what setTimeout accepts (2^31 - 1).
const MAX_MILLIS = 2_147_483_647;
const DEFAULT_BODY_TIMEOUT_MS = 30_000;
// Index = the algorithm's number for Rust: src/options.rs reads it as an index
// into the core's `AnyLimit::NAMES` (src/limit/adaptive/named.rs), same order.
const ALGORITHMS = ["aimd", "gradient2", "vegas"];
const ALGORITHM_NAMES = '"aimd", "gradient2" or "vegas"';
// Bounds::EDGE of the core: initial 6, min 1, max 64.
const EDGE = { initial: 6, min: 1, max: 64 };

function describeValue(value) {
  if (value === null) return "null";
  if (typeof value === "number") return String(value);
  return typeof value;
}

function requireObject(value, what) {
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

// Keys other than `known` are refused (they are usually typos such as `maxInflight`).
function rejectUnknownKeys(object, known, what) {
  for (const key of Object.keys(object)) {
    if (!known.includes(key)) {
      throw new TypeError(`${what}.${key} is not a known option (expected one of: ${known.join(", ")})`);
    }
  }
}

function integerValue(value, name, min, max) {
  if (typeof value !== "number") throw new TypeError(`${name} must be a number, got ${describeValue(value)}`);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer from ${min} to ${max}, got ${describeValue(value)}`);
  }
  return value;
}

// An optional integer option within [min, max] (undefined when not given).
function integer(object, key, what, min, max) {
  const value = read(object, key, what);
  return value === undefined ? undefined : integerValue(value, `${what}.${key}`, min, max);
}

/**
 * `new Limiter(options)`: [maxInFlight, algorithm, initialLimit, minLimit,
 * maxLimit, maxQueue, queueTimeoutMs, bodyTimeoutMs, reserve.critical,
 * reserve.default (-1: not given), codelTargetMs (0: fifo), rate's count (0: none), its
 * period in seconds, burst, maxKeys]. A fixed limit has algorithm -1; an
 * adaptive one maxInFlight 0 and its algorithm's index. queueTimeoutMs is 0
 * when maxQueue is 0.
 */
export function limiterOptions(options) {
  const what = "options";
  requireObject(options, what);
  rejectUnknownKeys(options, LIMITER_KEYS, what);
  const maxInFlight = integer(options, "maxInFlight", what, 1, MAX_COUNT);
  const adaptive = read(options, "adaptive", what);
  if (maxInFlight !== undefined && adaptive !== undefined) {
    throw new TypeError(
      "options.maxInFlight and options.adaptive were both given: give exactly one (a fixed or an adaptive limit)",
    );
  }
  if (maxInFlight === undefined && adaptive === undefined) {
    throw new TypeError("options.maxInFlight (a fixed limit) or options.adaptive (an adaptive one) is required");
  }
  const [algorithm, initial, min, max] = adaptive === undefined ? [-1, 0, 0, 0] : adaptiveOptions(adaptive);
  const maxQueue = integer(options, "maxQueue", what, 0, MAX_COUNT) ?? 0;
  const queueTimeout = integer(options, "queueTimeoutMs", what, 0, MAX_MILLIS);
  const bodyTimeout = integer(options, "bodyTimeoutMs", what, 1, MAX_MILLIS) ?? DEFAULT_BODY_TIMEOUT_MS;
  if (maxQueue > 0 && queueTimeout === undefined) {
    throw new TypeError("options.queueTimeoutMs is required when options.maxQueue > 0 (every wait must be bounded)");
  }
  if (maxQueue > 0 && queueTimeout < 1) {
    throw new RangeError("options.queueTimeoutMs must be at least 1 when options.maxQueue > 0");
  }
  const timeout = maxQueue > 0 ? queueTimeout : 0;
  const classes = [...reserveOptions(read(options, "reserve", what)), codelTarget(options, timeout)];
  return [maxInFlight ?? 0, algorithm, initial, min, max, maxQueue, timeout, bodyTimeout, ...classes].concat(
    rateOptions(read(options, "rate", what)),
  );
}

const LIMITER_KEYS = ["maxInFlight", "adaptive", "maxQueue", "queueTimeoutMs", "bodyTimeoutMs"].concat(
  ["reserve", "queueDiscipline", "codelTargetMs", "rate"],
);
// The contract's default reserve (docs/js.md, Criticality): 0.1 of the limit for critical calls, 0.2 more for default ones.
const RESERVE = { critical: 0.1, default: 0.2 };
const CODEL_TARGET_MS = 5;

// `options.reserve`: [critical, default], fractions of the limit in [0, 1]
// whose sum is at most 1; a fraction not given keeps its default. [-1, -1]
// when not given: the default reserve, kept from the first call that names
// its criticality (see src/counters.rs).
function reserveOptions(reserve) {
  const what = "options.reserve";
  if (reserve === undefined) return [-1, -1];
  requireObject(reserve, what);
  rejectUnknownKeys(reserve, ["critical", "default"], what);
  const fraction = (key) => {
    const value = read(reserve, key, what);
    if (value === undefined) return RESERVE[key];
    if (typeof value !== "number") throw new TypeError(`${what}.${key} must be a number, got ${describeValue(value)}`);
    if (!(value >= 0 && value <= 1)) {
      throw new RangeError(`${what}.${key} must be a fraction of the limit from 0 to 1, got ${describeValue(value)}`);
    }
    return value;
  };
  const critical = fraction("critical");
  const kept = fraction("default");
  if (critical + kept > 1) {
    throw new RangeError(`${what}.critical + ${what}.default must not exceed 1 (the whole limit), got ${critical + kept}`);
  }
  return [critical, kept];
}

// `options.queueDiscipline` and `options.codelTargetMs`: codel's target in
// ms, 0 for fifo.
function codelTarget(options, queueTimeout) {
  const what = "options";
  const discipline = read(options, "queueDiscipline", what) ?? "fifo";
  if (discipline !== "fifo" && discipline !== "codel") {
    throw new TypeError(`options.queueDiscipline must be "fifo" or "codel", got ${quoted(discipline)}`);
  }
  const target = integer(options, "codelTargetMs", what, 1, MAX_MILLIS);
  if (discipline === "fifo") {
    if (target !== undefined) throw new TypeError('options.codelTargetMs needs options.queueDiscipline "codel"');
    return 0;
  }
  if (queueTimeout === 0) {
    throw new TypeError('options.queueDiscipline "codel" needs a queue (options.maxQueue > 0 and options.queueTimeoutMs)');
  }
  const ms = target ?? CODEL_TARGET_MS;
  if (ms >= queueTimeout) {
    throw new RangeError(
      `options.codelTargetMs (${ms}${target === undefined ? " by default" : ""}) must be shorter than options.queueTimeoutMs (${queueTimeout})`,
    );
  }
  return ms;
}

// `options.rate`: [count, period in seconds, burst, maxKeys]; [0, 0, 0, 0] for none.
function rateOptions(rate) {
  const what = "options.rate";
  if (rate === undefined) return [0, 0, 0, 0];
  requireObject(rate, what);
  rejectUnknownKeys(rate, ["perSecond", "perMinute", "burst", "maxKeys"], what);
  const perSecond = integer(rate, "perSecond", what, 1, MAX_RATE);
  const perMinute = integer(rate, "perMinute", what, 1, MAX_RATE);
  if ((perSecond === undefined) === (perMinute === undefined)) {
    throw new TypeError("options.rate needs exactly one of options.rate.perSecond and options.rate.perMinute");
  }
  const count = perSecond ?? perMinute;
  const burst = integer(rate, "burst", what, 1, MAX_RATE) ?? count;
  const maxKeys = integer(rate, "maxKeys", what, 1, MAX_COUNT) ?? DEFAULT_MAX_KEYS;
  return [count, perSecond === undefined ? 60 : 1, burst, maxKeys];
}
const MAX_RATE = 1_000_000_000;
const DEFAULT_MAX_KEYS = 10_000;

function quoted(value) {
  return typeof value === "string" ? JSON.stringify(value) : describeValue(value);
}

// `options.adaptive`: [algorithm index, initialLimit, minLimit, maxLimit].
// The bounds default to the core's edge bounds; an initialLimit not given is
// 6 moved into [minLimit, maxLimit].
function adaptiveOptions(adaptive) {
  const what = "options.adaptive";
  requireObject(adaptive, what);
  rejectUnknownKeys(adaptive, ["algorithm", "initialLimit", "minLimit", "maxLimit"], what);
  const name = read(adaptive, "algorithm", what);
  if (name === undefined) throw new TypeError(`options.adaptive.algorithm is required: ${ALGORITHM_NAMES}`);
  if (typeof name !== "string") {
    throw new TypeError(`options.adaptive.algorithm must be a string (${ALGORITHM_NAMES}), got ${describeValue(name)}`);
  }
  const algorithm = ALGORITHMS.indexOf(name);
  if (algorithm < 0) {
    throw new TypeError(`options.adaptive.algorithm "${name}" is not an algorithm: expected ${ALGORITHM_NAMES}`);
  }
  const given = integer(adaptive, "initialLimit", what, 1, MAX_COUNT);
  const min = integer(adaptive, "minLimit", what, 1, MAX_COUNT) ?? EDGE.min;
  const max = integer(adaptive, "maxLimit", what, 1, MAX_COUNT) ?? EDGE.max;
  if (max < min) {
    throw new RangeError(
      `options.adaptive.minLimit (${min}) must not exceed options.adaptive.maxLimit (${max}; ${EDGE.max} when not given)`,
    );
  }
  const initial = given ?? Math.min(Math.max(EDGE.initial, min), max);
  if (initial < min || initial > max) {
    throw new RangeError(
      `options.adaptive.initialLimit (${initial}) must lie within [options.adaptive.minLimit, options.adaptive.maxLimit] (${min} to ${max})`,
    );
  }
  return [algorithm, initial, min, max];
}

// What `callFacts` read last that its number cannot hold: the signal and the key.
let lastSignal;
let lastKey;

// Criticality index (the core's Criticality::index()), 3 when not given.
function criticalityIndex(value, what) {
  switch (value) {
    case undefined:
      return 3;
    case "sheddable":
      return 0;
    case "default":
      return 1;
    case "critical":
      return 2;
    default:
      throw new TypeError(`${what}.criticality must be "critical", "default" or "sheddable", got ${quoted(value)}`);
  }
}

/**
 * `run(fn, options)` / `fetch(input, init)`'s edgeshed keys, in one number
 * (one crossing, each key read once; -1 when they are invalid, see `callError`):
 * `(((deadlineMs + 1) * 2 + hasKey) * 2 + hasSignal) * 4 + criticality`
 * (deadlineMs -1 for none, criticality 3 when not given); the signal and the
 * key are kept for `callSignal` and `callKey`. With `strict`, other keys are
 * refused (`run`'s options); without, they are left for `fetch`, except near
 * misses of `deadlineMs` and `criticality` (`deadlineMS`, `critcality`, ...),
 * which `fetch` would ignore silently: those are refused too.
 */
export function callFacts(object, strict) {
  if (object === undefined || object === null) return 3;
  lastSignal = undefined;
  lastKey = undefined;
  // Not an import marked `catch`: wasm-bindgen's wrapper for those costs a
  // closure and an `apply` per call. A refusal is kept for `callError`.
  try {
    return facts(object, strict);
  } catch (error) {
    lastError = error;
    return -1;
  }
}

let lastError;
/** The error of the last `callFacts` that returned -1. */
export function callError() {
  const error = lastError;
  lastError = undefined;
  return error;
}

// Named property reads and `for...in` (no `Object.keys` array, no keyed
// loads through a helper): a fifth of the cost, measured with
// benches/node/criticality.mjs.
function facts(object, strict) {
  // Named here, not passed in: a string from the wasm costs a decode per call.
  const what = strict ? "options" : "init";
  requireObject(object, what);
  if (strict) {
    for (const key in object) {
      if (key !== "signal" && key !== "deadlineMs" && key !== "criticality" && key !== "key") {
        throw new TypeError(`${what}.${key} is not a known option (expected one of: signal, deadlineMs, criticality, key)`);
      }
    }
  } else {
    for (const key of ["deadlineMs", "criticality"]) {
      const typo = nearMissKey(object, key);
      if (typo !== undefined) throw new TypeError(`${what}.${typo} is not an option: did you mean ${what}.${key}?`);
    }
  }
  let signal, deadline, criticality, key;
  try {
    signal = object.signal;
    deadline = object.deadlineMs;
    criticality = object.criticality;
    key = object.key;
  } catch (error) {
    throw new TypeError(`${what} could not be read (${error})`);
  }
  if (signal === null) signal = undefined;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new TypeError(`${what}.signal must be an AbortSignal, got ${describeValue(signal)}`);
  }
  deadline = deadline === undefined ? -1 : integerValue(deadline, `${what}.deadlineMs`, 0, MAX_MILLIS);
  const rank = criticalityIndex(criticality, what);
  if (key !== undefined && typeof key !== "string") {
    throw new TypeError(`${what}.key must be a string (a tenant, an API key, a client address), got ${describeValue(key)}`);
  }
  lastSignal = signal;
  lastKey = key;
  return (((deadline + 1) * 2 + (key === undefined ? 0 : 1)) * 2 + (signal === undefined ? 0 : 1)) * 4 + rank;
}

/** The `signal` of the options `callFacts` read last (it said there is one). */
export function callSignal() {
  const signal = lastSignal;
  lastSignal = undefined;
  return signal;
}

/** The `key` of the options `callFacts` read last (it said there is one). */
export function callKey() {
  const key = lastKey ?? "";
  lastKey = undefined;
  return key;
}

/** `limiter.setLimit(limit)`'s argument: an integer from 1 to 1,000,000. */
export function checkedLimit(limit) {
  return integerValue(limit, "limit", 1, MAX_COUNT);
}

// The first own key of `object` that is a near miss of `key` (the same but
// for case, or at most two edits away) without being `key`.
function nearMissKey(object, key) {
  let keys;
  try {
    keys = Object.keys(object);
  } catch {
    return undefined;
  }
  const wanted = key.toLowerCase();
  return keys.find((k) => k !== key && editDistanceAtMost2(k.toLowerCase(), wanted));
}
// Levenshtein distance <= 2 (a typo), one row at a time.
function editDistanceAtMost2(a, b) {
  if (Math.abs(a.length - b.length) > 2) return false;
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length] <= 2;
}
