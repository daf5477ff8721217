// The npm package's option types, rendered from the core's options table
// (src/options_schema.rs) by crates/edgeshed-js/tests/options_schema/main.rs: do not edit.
// After a change to the table: EDGESHED_BLESS=1 cargo test -p edgeshed-js --test options_schema

/**
 * How much a call matters when the limiter is full: `"critical"` calls are shed last, `"sheddable"`
 * ones (batch work, prefetches) first.
 */
export type Criticality = "critical" | "default" | "sheddable";

/** The queue's order within one criticality (higher criticalities always go first). */
export type QueueDiscipline = "fifo" | "codel";

/** How long a call may wait in the queue. */
export type QueueWait = "timeout" | "auto";

/**
 * The adaptive algorithms: `"aimd"` backs off on drops (503/429 answers, network failures),
 * `"gradient2"` (Netflix) and `"vegas"` on latency above the origin's no-load latency (measured in
 * drains that every isolate runs at the same wall-clock moments).
 */
export type AdaptiveAlgorithm = "aimd" | "gradient2" | "vegas";

/**
 * The part of the limit kept for more critical calls, as fractions of the current limit (their sum
 * at most 1). Of a limit `n`, sheddable calls may hold `max(1, floor(n × (1 − critical −
 * default)))` slots, default calls `max(1, floor(n × (1 − critical)))`, critical calls all `n`;
 * when `n ≥ 2` one slot always stays for critical calls (limit 10: 7 / 9 / 10; limit 2: 1 / 1 /
 * 2).
 */
export interface ReserveOptions {
  /** Kept for critical calls (0 to 1; default 0.1). */
  critical?: number | undefined;
  /** Kept for default and critical calls on top of `critical` (0 to 1; default 0.2). */
  default?: number | undefined;
}

/**
 * `options.adaptive`. Every call is classified once as served, dropped or ignored: `run` from
 * admission until `fn` settles (a drop: a rejection whose `status` is 503 or 429), `fetch` until
 * its body is read to the end (a drop: a 503/429 answer, at its headers, a network failure, or a
 * body that fails from the origin). A `DeadlineError`, a passed `deadlineMs` and a caller's abort
 * are ignored.
 */
export interface AdaptiveOptions {
  /** The algorithm that moves the limit. */
  algorithm: AdaptiveAlgorithm;
  /** The limit before any sample (1 to 1,000,000; default 6, moved into `[minLimit, maxLimit]`). */
  initialLimit?: number | undefined;
  /** The lowest the limit goes (1 to 1,000,000; default 1). */
  minLimit?: number | undefined;
  /** The highest the limit goes (1 to 1,000,000; default 64). */
  maxLimit?: number | undefined;
}

/**
 * `options.rate`: a GCRA rate limit per `key` (the calls without a key share one allowance); over
 * it, a call is refused with a `RateLimitedError` (`reason` `"rate"`, `retryAfterMs`).
 */
export type RateOptions = (
  | {
      /**
       * Calls per second per key (exactly one of `perSecond` and `perMinute`; 1 to 1,000,000,000).
       */
      perSecond: number;
      perMinute?: undefined;
    }
  | {
      /**
       * Calls per minute per key (exactly one of `perSecond` and `perMinute`; 1 to 1,000,000,000).
       */
      perMinute: number;
      perSecond?: undefined;
    }
) & {
  /**
   * The most calls a key may make at once after a quiet spell (1 to 1,000,000,000; default one
   * period's calls).
   */
  burst?: number | undefined;
  /**
   * The most keys tracked at once; while all are still limited, new keys share one overflow
   * allowance (`rateOverflow`; 1 to 1,000,000; default 10,000).
   */
  maxKeys?: number | undefined;
};

/**
 * The options of `new Limiter(options)` besides its limit and its queue. All counts and times are
 * integers.
 */
export interface LimiterPolicyOptions {
  /**
   * Longest a `fetch` response body may sit idle while it holds its slot, in ms. Idle: neither read
   * by the consumer nor fed by the origin. Then the body is cancelled (a later read rejects with a
   * `DeadlineError`) and the slot freed, counted in `bodyTimeouts` (1 to 2,147,483,647; default
   * 30,000).
   */
  bodyTimeoutMs?: number | undefined;
  /**
   * The part of the limit kept for more critical calls (default each key's own, kept from the first
   * call that names its `criticality`; a limiter whose calls never name one uses the whole limit
   * for them).
   */
  reserve?: ReserveOptions | undefined;
  /**
   * `"fifo"`, or `"codel"` (needs a queue): once no slot has been free for `queueTimeoutMs` the
   * queue stands, and it keeps standing for one `queueTimeoutMs` after that was last seen; while it
   * stands, new waiters get `codelTargetMs`, the queue is served newest first, a waiter that
   * reaches the head after more than `codelTargetMs` is refused (`queue_timeout`), and a full queue
   * gives up its oldest waiter (default `"fifo"`).
   */
  queueDiscipline?: QueueDiscipline | undefined;
  /**
   * `"timeout"`: up to `queueTimeoutMs`; or `"auto"` (needs a queue): a call whose expected wait
   * (its place in the queue over the measured completion rate) is longer than one measured service
   * time (or `codelTargetMs`, if longer) is refused at once (`queue_timeout`, `waitedMs` 0), so a
   * burst's excess is answered at once and admitted calls stay near the unloaded latency (default
   * `"timeout"`).
   */
  maxQueueWait?: QueueWait | undefined;
  /**
   * With `"codel"`: the wait of new waiters once a queue stands, in ms (less than `queueTimeoutMs`;
   * 1 to 2,147,483,647; default 5).
   */
  codelTargetMs?: number | undefined;
  /** A rate limit per `key`, checked before the concurrency limit. */
  rate?: RateOptions | undefined;
}

/**
 * How a call is treated under overload: its `criticality` (its reserve, its place in the queue,
 * whom it may displace), its `key` (its flow in fair queueing, its fair share and its rate limit)
 * and its key's `fairWeight`.
 */
export interface CallClass {
  /** How much the call matters when the limiter is full (default `"default"`). */
  criticality?: Criticality | undefined;
  /**
   * Who the call is for (a tenant, an API key, a client address), for fair queueing and the rate
   * limit. Within a criticality every key queues on its own and a freed slot goes to the key with
   * the least service for its weight (the slots it holds plus its recent grants); a key over its
   * fair share (the limit divided by the keys with calls in flight or waiting, rounded up) while
   * other keys wait is refused with a `RateLimitedError` (`reason` `"fair_share"`), and so is its
   * newest waiter when a full queue makes room for a key under its share. A key alone may use the
   * whole limit; the calls without a key share one key of their own.
   */
  key?: string | undefined;
  /**
   * The weight of the call's key in fair queueing: a key of weight 2 gets twice the share of a key
   * of weight 1 (a paying tenant). A key takes the weight of its latest call; the calls without a
   * key share one key of weight 1 (1 to 1,000; default 1).
   */
  fairWeight?: number | undefined;
}

/** Per-call options of `Limiter.run`. */
export interface RunOptions extends CallClass {
  /**
   * Aborting it removes a queued call, or rejects a running one at once with the signal's reason
   * (its slot is freed when `fn` settles).
   */
  signal?: AbortSignal | undefined;
  /** Budget in ms from the call, covering the queue wait and the work (0 to 2,147,483,647). */
  deadlineMs?: number | undefined;
}
