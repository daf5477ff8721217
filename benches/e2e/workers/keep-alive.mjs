// Shared by the baseline workers that queue in JavaScript (plimit.mjs,
// envoy-style.mjs). workerd cancels a request that waits only on a promise
// that another request will settle ("your Worker's code had hung"): a queue
// in front of an origin is exactly that. A pending timer of the request's
// own keeps it alive while it waits (the same trick edgeshed uses for its
// queued waits).
const KEEPALIVE_MS = 1000;

/** `promise`, with a timer of the calling request pending until it settles. */
export function keepAlive(promise) {
  let timer;
  const tick = () => (timer = setTimeout(tick, KEEPALIVE_MS));
  tick();
  return promise.finally(() => clearTimeout(timer));
}
