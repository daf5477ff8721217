//! The TypeScript declarations of the npm package (`index.d.ts` is made
//! from them by wasm-bindgen). The error classes are declared in
//! `npm/errors.d.ts`, next to the `errors.js` that exports them.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &'static str = r#"
/**
 * How much a call matters when the limiter is full: `"critical"` calls are
 * shed last, `"sheddable"` ones (batch work, prefetches) first.
 */
export type Criticality = "critical" | "default" | "sheddable";

/**
 * The part of the limit kept for more critical calls, as fractions of the
 * current limit (each 0 to 1, their sum at most 1). Of a limit `n`, sheddable
 * calls may hold `max(1, floor(n × (1 − critical − default)))` slots, default
 * calls `max(1, floor(n × (1 − critical)))`, critical calls all `n`; when
 * `n ≥ 2` one slot always stays for critical calls (limit 10: 7 / 9 / 10;
 * limit 2: 1 / 1 / 2).
 */
export interface ReserveOptions {
  /** Kept for critical calls (default 0.1). */
  critical?: number | undefined;
  /** Kept for default and critical calls on top of `critical` (default 0.2). */
  default?: number | undefined;
}

/** The queue's order within one criticality (higher criticalities always go first). */
export type QueueDiscipline = "fifo" | "codel";

/**
 * `options.rate`: a GCRA rate limit per `key` (the calls without a key share
 * one allowance); over it, a call is refused with a `RateLimitedError`
 * (`reason` `"rate"`, `retryAfterMs`). Exactly one of `perSecond` and `perMinute`.
 */
export type RateOptions = ({ perSecond: number; perMinute?: undefined } | { perMinute: number; perSecond?: undefined }) & {
  /** The most calls a key may make at once after a quiet spell (default: one period's calls). */
  burst?: number | undefined;
  /** The most keys tracked at once (default 10,000); when all are still limited, a new key is refused. */
  maxKeys?: number | undefined;
};

/** The options of `new Limiter(options)` besides its limit and its queue. All counts and times are integers. */
export interface LimiterPolicyOptions {
  /**
   * Longest a `fetch` response body may sit idle while it holds its slot, in
   * ms (1 to 2,147,483,647; default 30000). Idle: neither read by the consumer
   * nor fed by the origin. Then the body is cancelled (a later read rejects
   * with a `DeadlineError`) and the slot freed, counted in `bodyTimeouts`.
   */
  bodyTimeoutMs?: number | undefined;
  /**
   * The part of the limit kept for more critical calls. Not given: the
   * default, `{ critical: 0.1, default: 0.2 }`, kept from the first call that
   * names its `criticality` (a limiter whose calls never name one uses the
   * whole limit for them).
   */
  reserve?: ReserveOptions | undefined;
  /**
   * `"fifo"` (default), or `"codel"` (needs a queue): while the queue has
   * emptied within the last `queueTimeoutMs`, waiters may wait
   * `queueTimeoutMs`; once a queue stands longer, new waiters get
   * `codelTargetMs` and the queue is served newest first until it drains.
   */
  queueDiscipline?: QueueDiscipline | undefined;
  /** With `"codel"`: the wait of new waiters once a queue stands, in ms (default 5; less than `queueTimeoutMs`). */
  codelTargetMs?: number | undefined;
  /** A rate limit per `key`, checked before the concurrency limit. */
  rate?: RateOptions | undefined;
}

/** No queue: when every slot is taken, a call is shed at once (the default). */
export interface NoQueueOptions {
  /** 0 (or left out): no call waits. */
  maxQueue?: 0 | undefined;
  /** Longest wait in the queue, in ms: unused without a queue. */
  queueTimeoutMs?: number | undefined;
}

/** A bounded queue: every wait is bounded, so `queueTimeoutMs` is required. */
export interface BoundedQueueOptions {
  /** Most calls waiting for a slot (0 to 1,000,000). */
  maxQueue: number;
  /** Longest wait in the queue, in ms (1 to 2,147,483,647). */
  queueTimeoutMs: number;
}

/**
 * The queue: none (`maxQueue` 0 or left out), or `maxQueue` with its
 * `queueTimeoutMs` (a queue without a timeout is a type error, as it is an
 * error at run time).
 */
export type QueueOptions = NoQueueOptions | BoundedQueueOptions;

/** A fixed limit: `maxInFlight` (changed at run time with `setLimit`). */
export type FixedLimiterOptions = LimiterPolicyOptions & QueueOptions & {
  /** Most calls running at once (1 to 1,000,000). */
  maxInFlight: number;
  adaptive?: undefined;
};

/** An adaptive limit: the algorithm moves it within its bounds (no `setLimit`). */
export type AdaptiveLimiterOptions = LimiterPolicyOptions & QueueOptions & {
  adaptive: AdaptiveOptions;
  maxInFlight?: undefined;
};

/** Options of `new Limiter(options)`: exactly one of `maxInFlight` and `adaptive`. */
export type LimiterOptions = FixedLimiterOptions | AdaptiveLimiterOptions;

/**
 * The adaptive algorithms: `"aimd"` backs off on drops (503/429 answers,
 * network failures), `"gradient2"` (Netflix) and `"vegas"` on latency above
 * the origin's no-load latency (measured in drains that every isolate runs
 * at the same wall-clock moments).
 */
export type AdaptiveAlgorithm = "aimd" | "gradient2" | "vegas";

/**
 * `options.adaptive`. Every call is classified once as served, dropped or
 * ignored: `run` from admission until `fn` settles (a drop: a rejection whose
 * `status` is 503 or 429), `fetch` until the response headers (a drop: a
 * 503/429 answer or a network failure). A `DeadlineError`, a passed
 * `deadlineMs` and a caller's abort are ignored. Limits are integers from 1
 * to 1,000,000.
 */
export interface AdaptiveOptions {
  algorithm: AdaptiveAlgorithm;
  /** The limit before any sample (default 6, moved into `[minLimit, maxLimit]`). */
  initialLimit?: number | undefined;
  /** The lowest the limit goes (default 1). */
  minLimit?: number | undefined;
  /** The highest the limit goes (default 64). */
  maxLimit?: number | undefined;
}

/**
 * How a call is treated under overload: its `criticality` (its reserve, its
 * place in the queue, whom it may displace) and its `key` (its fair share and
 * its rate limit).
 */
export interface CallClass {
  /** Default `"default"`. */
  criticality?: Criticality | undefined;
  /**
   * Who the call is for (a tenant, an API key, a client address). When the
   * limit is reached and other keys' calls wait, a key holding more than its
   * fair share (the limit divided by the keys with calls in flight or waiting)
   * is refused with a `RateLimitedError` (`reason` `"fair_share"`); a key alone
   * may use the whole limit.
   */
  key?: string | undefined;
}

/** Per-call options of `Limiter.run`. */
export interface RunOptions extends CallClass {
  /**
   * Aborting it removes a queued call, or rejects a running one at once with
   * the signal's reason (its slot is freed when `fn` settles).
   */
  signal?: AbortSignal | undefined;
  /** Budget in ms from the call, covering the queue wait and the work. */
  deadlineMs?: number | undefined;
}

/** `RunOptions` with a `signal` or a `deadlineMs`: then `fn` receives an `AbortSignal`. */
export type SignalledRunOptions = RunOptions & ({ signal: AbortSignal } | { deadlineMs: number });

/** `fetch` init, plus edgeshed's `deadlineMs` (until response headers), `criticality` and `key`. */
export interface LimitedRequestInit extends RequestInit, CallClass {
  deadlineMs?: number | undefined;
}

/** `stats().byCriticality`: the calls of one criticality. */
export interface CriticalityStats {
  /** Admitted so far. */
  admitted: number;
  /** Rejected at once (`OverloadedError`, `reason` `"limit"`). */
  shed: number;
  /** Displaced from a full queue by a more critical call (`reason` `"displaced"`). */
  displaced: number;
  /** Holding a slot now. */
  inFlight: number;
  /** Waiting now. */
  queued: number;
}

/** A snapshot of a limiter. */
export interface LimiterStats {
  /** Calls holding a slot now (abandoned ones and held bodies included). */
  inFlight: number;
  /** Calls waiting for a slot now. */
  queued: number;
  /** Calls admitted so far. */
  admitted: number;
  /** Calls rejected at once (full, queue full). */
  shed: number;
  /** Calls rejected after waiting `queueTimeoutMs`. */
  queueTimeouts: number;
  /** Calls rejected with a `DeadlineError` when their `deadlineMs` passed. */
  expired: number;
  /** Calls rejected (deadline or abort) while their work still ran: their slot was freed when it settled. */
  abandoned: number;
  /** Slots held by `fetch` response bodies now. */
  heldBodies: number;
  /** `fetch` bodies cancelled after sitting idle for `bodyTimeoutMs`. */
  bodyTimeouts: number;
  /** The current limit: `maxInFlight` (or the last `setLimit`), or the adaptive algorithm's. */
  limit: number;
  /** The same per criticality. */
  byCriticality: Record<Criticality, CriticalityStats>;
  /** Calls refused (429, `reason` `"fair_share"`) because their key held more than its fair share. */
  fairShareRefused: number;
  /** Calls refused (429, `reason` `"rate"`) by `options.rate`. */
  rateLimited: number;
}

/**
 * Admission control for async work: at most `maxInFlight` calls at once (or
 * an adaptive limit), at most `maxQueue` more waiting (each at most
 * `queueTimeoutMs`), the rest rejected at once with an `OverloadedError`.
 * `O` is the kind of options it was made with: `setLimit` takes no limit on
 * a limiter made with `adaptive`.
 */
export class Limiter<O extends LimiterOptions = LimiterOptions> {
  /** @throws {TypeError | RangeError} naming the invalid option. */
  constructor(options: O);
  /**
   * Runs `fn` once admitted and settles with its result (refusals:
   * `OverloadedError` 503, `RateLimitedError` 429). With a `signal` or
   * a `deadlineMs`, `fn` receives an AbortSignal that aborts when either
   * fires; pass it on (e.g. to `fetch`) so the work stops too. A deadline or
   * abort rejects at once (`DeadlineError`, or the signal's reason); the
   * slot is freed when `fn` settles.
   */
  run<T>(fn: (signal: AbortSignal) => T | PromiseLike<T>, options: SignalledRunOptions): Promise<T>;
  /** Runs `fn` once admitted; `fn` receives a signal only if `options` has a `signal` or `deadlineMs`. */
  run<T>(fn: (signal?: AbortSignal) => T | PromiseLike<T>, options?: RunOptions): Promise<T>;
  /**
   * `fetch` under the limit; the slot is held until the body is read to the
   * end, cancelled or errors, sits idle for `bodyTimeoutMs`, or the
   * `Response` is garbage-collected unread. A deadline or abort rejects at
   * once; the slot is freed when the aborted fetch settles.
   * @throws {TypeError} (as a rejection) for a near miss of `deadlineMs` such as `deadlineMS`.
   */
  fetch(input: RequestInfo | URL, init?: LimitedRequestInit): Promise<Response>;
  /** Current state and counters. */
  stats(): LimiterStats;
  /**
   * Changes a fixed limiter's limit (an integer from 1 to 1,000,000). Raising
   * it admits queued calls at once; lowering it never interrupts running
   * calls: no new call is admitted until fewer than `limit` run.
   * @throws {RangeError | TypeError} naming `limit` when it is invalid.
   * @throws {TypeError} on an adaptive limiter (its algorithm sets the limit):
   * a type error too, when the limiter's options are known to be adaptive.
   */
  setLimit(limit: O extends AdaptiveLimiterOptions ? never : number): void;
  /** Frees the wasm memory of this limiter (calls still running keep their slot). */
  free(): void;
}
"#;
