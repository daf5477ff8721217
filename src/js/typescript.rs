//! The TypeScript declarations of the npm package (`index.d.ts` is made
//! from them by wasm-bindgen).

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &'static str = r#"
/** Options of `new Limiter(options)`. All values are integers. */
export interface LimiterOptions {
  /** Most calls running at once (1 to 1,000,000). */
  maxInFlight: number;
  /** Most calls waiting for a slot (0 to 1,000,000; default 0 = shed at once when full). */
  maxQueue?: number;
  /** Longest wait in the queue, in ms (required when `maxQueue > 0`). */
  queueTimeoutMs?: number;
}

/** Per-call options of `Limiter.run`. */
export interface RunOptions {
  /** Aborting it removes a queued call, or rejects a running one with the signal's reason. */
  signal?: AbortSignal;
  /** Budget in ms from the call, covering the queue wait and the work. */
  deadlineMs?: number;
}

/** `fetch` init, plus edgeshed's `deadlineMs` (until response headers). */
export interface LimitedRequestInit extends RequestInit {
  deadlineMs?: number;
}

/** A snapshot of a limiter. */
export interface LimiterStats {
  /** Calls holding a slot now. */
  inFlight: number;
  /** Calls waiting for a slot now. */
  queued: number;
  /** Calls admitted so far. */
  admitted: number;
  /** Calls rejected at once (full, queue full). */
  shed: number;
  /** Calls rejected after waiting `queueTimeoutMs`. */
  queueTimeouts: number;
  /** `maxInFlight`. */
  limit: number;
}

/** Rejection of a call refused for lack of capacity. */
export interface OverloadedError extends Error { name: "OverloadedError"; status: 503 }
/** Rejection of a call whose deadline passed. */
export interface DeadlineError extends Error { name: "DeadlineError"; status: 504 }

/**
 * Admission control for async work: at most `maxInFlight` calls at once, at
 * most `maxQueue` more waiting (each at most `queueTimeoutMs`), the rest
 * rejected at once with an `OverloadedError`.
 */
export class Limiter {
  /** @throws {TypeError | RangeError} naming the invalid option. */
  constructor(options: LimiterOptions);
  /**
   * Runs `fn` once admitted and settles with its result. When `signal` or
   * `deadlineMs` is given, `fn` receives an AbortSignal that aborts when
   * either fires; pass it on (e.g. to `fetch`) so the work stops too.
   */
  run<T>(fn: (signal?: AbortSignal) => T | PromiseLike<T>, options?: RunOptions): Promise<T>;
  /** `fetch` under the limit; the slot is held until the body is read, cancelled or errors. */
  fetch(input: RequestInfo | URL, init?: LimitedRequestInit): Promise<Response>;
  /** Current state and counters. */
  stats(): LimiterStats;
  /** Frees the wasm memory of this limiter (calls still running keep their slot). */
  free(): void;
}
"#;
