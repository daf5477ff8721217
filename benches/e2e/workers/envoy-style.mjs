// Baseline 3 for benches/e2e: "Envoy-style", a stand-in for Envoy's cluster
// circuit breakers written in plain JavaScript (it is not Envoy and shares no
// code with it). The same fan-out as the edgeshed worker's routes: per origin
// at most `maxInFlight` calls at once (Envoy's max_requests) and at most
// `maxPending` waiting for a slot (max_pending_requests), first come first
// served, one class for every request: no priorities, no per-key share. A
// request that would find any origin's pending queue full is answered 503 at
// once and calls no origin (Envoy's overflow, x-envoy-overloaded). As in
// Envoy, the wait is bounded by the queue's length, not by a queue timeout.
// Binding BENCH: { origins: { a: "http://127.0.0.1:port", ... },
// maxInFlight: 4, maxPending: 4, paths: ["/aggregate"] }.
import { keepAlive } from "./keep-alive.mjs";

/** One origin's slots and its FIFO of waiters. */
class Gate {
  constructor(limit, maxPending) {
    this.limit = limit;
    this.maxPending = maxPending;
    this.active = 0;
    this.pending = [];
  }

  /** Whether an arrival now would overflow the pending queue. */
  full() {
    return this.active >= this.limit && this.pending.length >= this.maxPending;
  }

  /** Resolves once the caller holds a slot (at once when one is free). */
  enter() {
    if (this.active < this.limit) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.pending.push(resolve));
  }

  /** Frees the caller's slot: the oldest waiter takes it over. */
  leave() {
    const next = this.pending.shift();
    if (next) next();
    else this.active--;
  }
}

let gates;

/** Calls origin `name` once its gate lets it; the slot is freed however the call ends. */
async function call(name, url) {
  await keepAlive(gates[name].enter());
  try {
    const response = await fetch(`${url}/${name}`);
    if (!response.ok) throw new Error(`${name} answered ${response.status}`);
    return [name, await response.json()];
  } finally {
    gates[name].leave();
  }
}

export default {
  async fetch(request, env) {
    const { origins, maxInFlight, maxPending, paths = ["/aggregate"] } = env.BENCH;
    gates ??= Object.fromEntries(Object.keys(origins).map((name) => [name, new Gate(maxInFlight, maxPending)]));
    if (!paths.includes(new URL(request.url).pathname)) {
      return Response.json({ error: "not_found" }, { status: 404 });
    }
    const full = Object.keys(origins).find((name) => gates[name].full());
    if (full) {
      return Response.json({ error: "overloaded", scope: `origin:${full}` }, { status: 503, headers: { "retry-after": "1" } });
    }
    try {
      const entries = await Promise.all(Object.entries(origins).map(([name, url]) => call(name, url)));
      return Response.json({ results: Object.fromEntries(entries), degraded: [] });
    } catch {
      return Response.json({ error: "bad_gateway" }, { status: 502 });
    }
  },
};
