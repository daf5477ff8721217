//! The TypeScript declarations of the npm package (`edgeshed.d.ts` is made
//! from them by wasm-bindgen). The per-key types (unions, `ReserveOptions`,
//! `AdaptiveOptions`, `RateOptions`, `LimiterPolicyOptions`, `CallClass`,
//! `RunOptions`) are `options.d.ts`, rendered from the core's options table
//! ([`options_schema`](edgeshed::options_schema)) by the host test
//! `tests/options_schema/`; the structural types are here. The error classes
//! are declared in `npm/errors.d.ts`, next to the `errors.js` that exports
//! them.

use wasm_bindgen::prelude::*;

/// The per-key option types, rendered from the core's options table.
#[wasm_bindgen(typescript_custom_section)]
const OPTION_TYPES: &str = include_str!("options.d.ts");

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &'static str = r#"
/** No queue: when every slot is taken, a call is shed at once (the default). */
export interface NoQueueOptions {
  /** 0 (or left out): no call waits. */
  maxQueue?: 0 | undefined;
  /** Without a queue no call waits: a `queueTimeoutMs` is refused (a `TypeError` naming it). */
  queueTimeoutMs?: undefined;
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

/**
 * A type no value has, whose one key is the message a type error shows
 * (`Property '"…"' is missing`): for options that must not be given.
 */
export type Refused<Message extends string> = { [message in Message]: never };

/** A fixed limit: `maxInFlight` (changed at run time with `setLimit`). */
export type FixedLimiterOptions = LimiterPolicyOptions & QueueOptions & {
  /** Most calls running at once (1 to 1,000,000). */
  maxInFlight: number;
  adaptive?: Refused<"edgeshed: give exactly one of maxInFlight (a fixed limit) and adaptive">;
};

/** An adaptive limit: the algorithm moves it within its bounds (no `setLimit`). */
export type AdaptiveLimiterOptions = LimiterPolicyOptions & QueueOptions & {
  adaptive: AdaptiveOptions;
  maxInFlight?: Refused<"edgeshed: give exactly one of maxInFlight (a fixed limit) and adaptive">;
};

/** Options of `new Limiter(options)`: exactly one of `maxInFlight` and `adaptive`. */
export type LimiterOptions = FixedLimiterOptions | AdaptiveLimiterOptions;

/** `RunOptions` with a `signal` or a `deadlineMs`: then `fn` receives an `AbortSignal`. */
export type SignalledRunOptions = RunOptions & ({ signal: AbortSignal } | { deadlineMs: number });

/** `fetch` init, plus edgeshed's `deadlineMs` (until response headers), `criticality`, `key` and `fairWeight`. */
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
  /**
   * Whether the reserve these calls must leave for more critical ones is lent
   * to them now (no more critical call holds a slot, waits, or was seen
   * lately): they may use the whole limit. `false` where nothing is lent.
   */
  lent: boolean;
}

/** `stats().topRefusedKeys`: one of the keys refused most often (429s and 503s). */
export interface RefusedKey {
  /** The key's first 16 bytes (never the whole value), or `null` for the calls without a key (which share one). */
  key: string | null;
  /** Its refusals: an upper bound, over by at most `overcount` (bounded memory: the space-saving algorithm). */
  refused: number;
  /** By how much `refused` may overcount. */
  overcount: number;
}

/** `stats().reserve`: the parts of the limit kept for more critical calls. */
export interface ReserveStats {
  /** Kept free of default and sheddable calls (a fraction of the limit). */
  critical: number;
  /** Kept free of sheddable calls on top of `critical`. */
  default: number;
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
  /**
   * The reserve in force, or `null` for none (every call may use the whole
   * limit): without `options.reserve`, the default one from the first call
   * that names its criticality.
   */
  reserve: ReserveStats | null;
  /**
   * How many calls of each criticality may hold a slot at once at the
   * current `limit` under `reserve` (a lent reserve lets lower ones use
   * the whole limit while no more critical call is about).
   */
  ceilings: Record<Criticality, number>;
  /** The same per criticality. */
  byCriticality: Record<Criticality, CriticalityStats>;
  /** Calls refused (429, `reason` `"fair_share"`) because their key held more than its fair share. */
  fairShareRefused: number;
  /** Calls refused (429, `reason` `"rate"`) by `options.rate`. */
  rateLimited: number;
  /**
   * Calls of new keys decided by `options.rate`'s one shared overflow
   * allowance because its table (`maxKeys`) was full of keys still limited:
   * admitted or refused (those refused are in `rateLimited` too).
   */
  rateOverflow: number;
  /**
   * The keys refused most often (at most 10, most first), counted in bounded
   * memory however many keys there are; the calls without a key count as one
   * (`key: null`) once a call with a key was seen.
   */
  topRefusedKeys: RefusedKey[];
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
  setLimit(
    limit: O extends AdaptiveLimiterOptions
      ? Refused<"edgeshed: setLimit is for a fixed limiter; this one is adaptive (its algorithm sets the limit)">
      : number,
  ): void;
  /**
   * Resolves once no call holds a slot (running, abandoned, or a `fetch`
   * body not yet done) and none waits: `stats().inFlight` and
   * `stats().queued` both 0. Resolved at once if that is so now.
   */
  onIdle(): Promise<void>;
  /**
   * Rejects every call waiting for a slot now with an `OverloadedError` of
   * `reason` `"cleared"`; running calls go on, later calls queue as usual.
   */
  clearQueue(): void;
  /**
   * Stops admitting: every later `run` and `fetch` is rejected at once with
   * an `OverloadedError` of `reason` `"closed"`. Calls running or waiting now
   * go on (call `clearQueue()` first to refuse the waiting ones); resolves
   * once the last of them has ended, as `onIdle()`.
   */
  close(): Promise<void>;
  /** Frees the wasm memory of this limiter (calls still running keep their slot). */
  free(): void;
}
"#;
