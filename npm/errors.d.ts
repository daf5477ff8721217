/**
 * Rejection of a call refused for lack of capacity: shed at once (all slots
 * taken, queue full) or after waiting `queueTimeoutMs`. Rejections are
 * instances of this class (`e instanceof OverloadedError`), made without a
 * stack trace.
 */
export class OverloadedError extends Error {
  constructor(message?: string);
  name: "OverloadedError";
  status: 503;
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
