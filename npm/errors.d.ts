/** Why an `OverloadedError` refused a call. */
export type OverloadReason = "limit" | "queue_timeout" | "displaced" | "budget" | "cleared" | "closed";

/**
 * Rejection of a call refused for lack of capacity (503): shed at once (its
 * criticality's share of the limit taken, queue full: `reason` `"limit"`),
 * after waiting `queueTimeoutMs` (`"queue_timeout"`), or displaced from a
 * full queue by a more critical call (`"displaced"`), refused while waiting
 * by `limiter.clearQueue()` (`"cleared"`), or made after `limiter.close()`
 * (`"closed"`). (`"budget"` is the gateway worker's fleet budget.)
 * Rejections are instances of this class (`e instanceof OverloadedError`).
 */
export class OverloadedError extends Error {
  constructor(message?: string, reason?: OverloadReason);
  name: "OverloadedError";
  status: 503;
  reason: OverloadReason;
}

/** Why a `RateLimitedError` refused a call. */
export type RateLimitReason = "fair_share" | "rate";

/**
 * Rejection of a call refused for its key's sake (429), not the service's:
 * its key held more than its fair share of the limit while other keys waited
 * (`reason` `"fair_share"`, `retryAfterMs` undefined), or went over
 * `options.rate` (`"rate"`, `retryAfterMs`: when the call would be allowed).
 */
export class RateLimitedError extends Error {
  constructor(message?: string, reason?: RateLimitReason, retryAfterMs?: number);
  name: "RateLimitedError";
  status: 429;
  reason: RateLimitReason;
  /** Milliseconds until the key's next call would be allowed (rounded up); undefined for the fair share. */
  retryAfterMs: number | undefined;
}

/**
 * Rejection of a call whose `deadlineMs` passed (queued or running), and the
 * error of a `fetch` body read after it sat idle for `bodyTimeoutMs`.
 */
export class DeadlineError extends Error {
  constructor(message?: string);
  name: "DeadlineError";
  status: 504;
}
