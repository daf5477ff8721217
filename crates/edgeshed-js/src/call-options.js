// Validation of the per-call options of the npm package's Limiter (`run`'s
// options, the edgeshed keys of `fetch`'s init) and of `setLimit`'s limit,
// imported by src/options.rs. The hot path of every call: named property
// reads, no `Object.keys` (benches/node/criticality.mjs). Names, ranges and
// enum values come from options-schema.js (the core's table,
// src/options_schema.rs); the helpers and messages are options.js's.
import { CALL, SET_LIMIT } from "./options-schema.js";
import { describeValue, integerValue, names, quoted, requireObject } from "./options.js";

// What `callFacts` read last that its number cannot hold: the signal and the key.
let lastSignal;
let lastKey;
// The call keys and their specs, read once (the hot path reads no schema object).
const CALL_KEYS = Object.keys(CALL).join(", ");
// Compared one by one on the hot path (faster than a lookup in CALL); the
// host test checks that CALL has exactly these keys, in this order.
const [SIGNAL, DEADLINE_MS, CRITICALITY, KEY, FAIR_WEIGHT] = Object.keys(CALL);
const DEADLINE = CALL.deadlineMs;
const WEIGHT = CALL.fairWeight;
// The facts' radix for the weight (options.rs decodes by the same: the core's Call::MAX_WEIGHT).
const WEIGHTS = WEIGHT.max;
const CRITICALITY_NAMES = names(CALL.criticality.values);
const [CRITICAL, DEFAULT, SHEDDABLE] = CALL.criticality.values;
const KEY_WHAT = CALL.key.what;

// A criticality's place in CALL.criticality.values (the core's
// Criticality::ALL, most important first: the one order every index of a
// criticality in this package uses), 3 when not given.
function criticalityIndex(value, what) {
  switch (value) {
    case undefined:
      return 3;
    case CRITICAL:
      return 0;
    case DEFAULT:
      return 1;
    case SHEDDABLE:
      return 2;
    default:
      throw new TypeError(`${what}.criticality must be ${CRITICALITY_NAMES}, got ${quoted(value)}`);
  }
}

/**
 * `run(fn, options)` / `fetch(input, init)`'s edgeshed keys, in one number
 * (one crossing, each key read once; -1 when they are invalid, see `callError`):
 * `((((deadlineMs + 1) * 1000 + fairWeight - 1) * 2 + hasKey) * 2 + hasSignal) * 4
 * + criticality` (deadlineMs -1 for none, fairWeight 1 when not given,
 * criticality 3 when not given); the signal and the key are kept for
 * `callSignal` and `callKey`. With `strict`, other keys are refused (`run`'s
 * options); without, they are left for `fetch`, except near misses of
 * `deadlineMs`, `criticality` and `fairWeight` (`deadlineMS`, `critcality`,
 * `fairweight`, ...), which `fetch` would ignore silently: those are refused too.
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
// benches/node/criticality.mjs. The names are CALL's (the host test
// crates/edgeshed-js/tests/options_schema/main.rs checks the table has them).
function facts(object, strict) {
  // Named here, not passed in: a string from the wasm costs a decode per call.
  const what = strict ? "options" : "init";
  requireObject(object, what);
  if (strict) {
    for (const key in object) {
      if (key !== SIGNAL && key !== DEADLINE_MS && key !== CRITICALITY && key !== KEY && key !== FAIR_WEIGHT) {
        throw new TypeError(`${what}.${key} is not a known option (expected one of: ${CALL_KEYS})`);
      }
    }
  } else {
    const miss = nearMiss(object);
    if (miss !== undefined) throw new TypeError(`${what}.${miss[0]} is not an option: did you mean ${what}.${miss[1]}?`);
  }
  let signal, deadline, criticality, key, weight;
  try {
    signal = object.signal;
    deadline = object.deadlineMs;
    criticality = object.criticality;
    key = object.key;
    weight = object.fairWeight;
  } catch (error) {
    throw new TypeError(`${what} could not be read (${error})`);
  }
  if (signal === null) signal = undefined;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new TypeError(`${what}.signal must be an AbortSignal, got ${describeValue(signal)}`);
  }
  deadline = deadline === undefined ? -1 : integerValue(deadline, DEADLINE, `${what}.deadlineMs`);
  const rank = criticalityIndex(criticality, what);
  if (key !== undefined && typeof key !== "string") {
    throw new TypeError(`${what}.key must be a string (${KEY_WHAT}), got ${describeValue(key)}`);
  }
  weight = weight === undefined ? 1 : integerValue(weight, WEIGHT, `${what}.fairWeight`);
  lastSignal = signal;
  lastKey = key;
  return ((((deadline + 1) * WEIGHTS + weight - 1) * 2 + (key === undefined ? 0 : 1)) * 2 + (signal === undefined ? 0 : 1)) * 4 + rank;
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

/** `limiter.setLimit(limit)`'s argument: an integer within SET_LIMIT's range. */
export function checkedLimit(limit) {
  return integerValue(limit, SET_LIMIT, "limit");
}

// Keys `fetch` would ignore silently if misspelt.
const NEAR_MISSED = [DEADLINE_MS, CRITICALITY, FAIR_WEIGHT];
const NEAR_MISSED_LOWER = NEAR_MISSED.map((key) => key.toLowerCase());
// The first own key of `object` that is a near miss of one of NEAR_MISSED
// (the same but for case, or at most two edits away) without being it, with
// the key it misses: [typo, key].
function nearMiss(object) {
  let keys;
  try {
    keys = Object.keys(object);
  } catch {
    return undefined;
  }
  for (let i = 0; i < NEAR_MISSED.length; i++) {
    const key = NEAR_MISSED[i];
    const typo = keys.find((k) => k !== key && editDistanceAtMost2(k.toLowerCase(), NEAR_MISSED_LOWER[i]));
    if (typo !== undefined) return [typo, key];
  }
  return undefined;
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
