// A plain-JavaScript stand-in for the edgeshed worker, for
// `node benches/soak/soak.mjs --worker plain`: the same routes, statuses and
// /__edgeshed/stats shape for the soak's configuration (env.EDGESHED), with
// a naive limiter per scope (FIFO queue, setTimeout queue timeout, a released
// permit handed straight to the first waiter). It tells workerd's own
// behaviour under the soak's load (RSS ramp, connection resets, hand-offs
// between requests) from edgeshed's. No wasm, no edgeshed code.

class Limit {
  constructor({ maxInFlight, maxQueue = 0, queueTimeoutMs = 0 }) {
    Object.assign(this, { max: maxInFlight, maxQueue, queueTimeoutMs });
    this.waiters = [];
    this.stats = { inFlight: 0, queued: 0, admitted: 0, shed: 0, queueTimeouts: 0, limit: maxInFlight };
  }
  /** Resolves true (admitted) or false (shed / queue timeout). */
  acquire() {
    if (this.stats.inFlight < this.max) {
      this.stats.inFlight++;
      this.stats.admitted++;
      return Promise.resolve(true);
    }
    if (this.waiters.length >= this.maxQueue) {
      this.stats.shed++;
      return Promise.resolve(false);
    }
    return new Promise((resolve) => {
      const waiter = { resolve };
      waiter.timer = setTimeout(() => {
        const i = this.waiters.indexOf(waiter);
        if (i < 0) return;
        this.waiters.splice(i, 1);
        this.stats.queued = this.waiters.length;
        this.stats.queueTimeouts++;
        resolve(false);
      }, this.queueTimeoutMs);
      this.waiters.push(waiter);
      this.stats.queued = this.waiters.length;
    });
  }
  release() {
    const next = this.waiters.shift();
    this.stats.queued = this.waiters.length;
    if (!next) {
      this.stats.inFlight--;
      return;
    }
    clearTimeout(next.timer);
    this.stats.admitted++;
    next.resolve(true); // resolved from the releasing request's context
  }
}

let state;
function setup(env) {
  if (state) return state;
  const config = typeof env.EDGESHED === "string" ? JSON.parse(env.EDGESHED) : env.EDGESHED;
  const origins = Object.fromEntries(Object.entries(config.origins).map(([name, o]) => [name, { ...o, limit: new Limit(o) }]));
  state = { config, global: new Limit(config.global), origins };
  return state;
}

const json = (status, body, headers = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

/** One fan-out call: { value } or { fail: "overloaded" | "deadline" | "timeout" | "unreachable", status? }. */
async function call(s, name, path, deadlineAt) {
  const origin = s.origins[name];
  if (!(await origin.limit.acquire())) return { fail: "overloaded" };
  const controller = new AbortController();
  const timeoutAt = Date.now() + (origin.timeoutMs ?? 30000);
  const limitAt = Math.min(timeoutAt, deadlineAt ?? Infinity);
  const timer = setTimeout(() => controller.abort(), Math.max(0, limitAt - Date.now()));
  try {
    const response = await fetch(origin.url + path, { signal: controller.signal });
    if (response.status < 200 || response.status > 299) {
      await response.body?.cancel();
      return { fail: "unreachable", status: response.status };
    }
    const text = await response.text();
    try {
      return { value: JSON.parse(text) };
    } catch {
      return { value: text };
    }
  } catch {
    if (!controller.signal.aborted) return { fail: "unreachable" };
    return { fail: limitAt === timeoutAt ? "timeout" : "deadline" };
  } finally {
    clearTimeout(timer);
    origin.limit.release();
  }
}

function failure(s, name, outcome) {
  const retry = { "retry-after": String(s.config.retryAfterSeconds ?? 1) };
  if (outcome.fail === "overloaded") return json(503, { error: "overloaded", scope: `origin:${name}` }, retry);
  if (outcome.fail === "deadline") return json(504, { error: "deadline" });
  if (outcome.fail === "timeout") return json(504, { error: "timeout", origin: name });
  return json(502, { error: "bad_gateway", origin: name, ...(outcome.status ? { status: outcome.status } : {}) });
}

export default {
  async fetch(request, env) {
    const s = setup(env);
    const url = new URL(request.url);
    if (url.pathname === "/__edgeshed/stats") {
      const origins = Object.fromEntries(Object.entries(s.origins).map(([n, o]) => [n, o.limit.stats]));
      return json(200, { global: s.global.stats, origins });
    }
    const start = Date.now();
    if (!(await s.global.acquire())) {
      return json(503, { error: "overloaded", scope: "global" }, { "retry-after": String(s.config.retryAfterSeconds ?? 1) });
    }
    try {
      const route = s.config.routes.find((r) => (r.path ? r.path === url.pathname : url.pathname.startsWith(r.prefix)));
      if (!route) return json(404, { error: "not_found" });
      if (route.fanout) {
        const deadlineAt = route.deadlineMs ? start + route.deadlineMs : undefined;
        const outcomes = await Promise.all(route.fanout.map((c) => call(s, c.origin, c.path, deadlineAt)));
        const results = {};
        const degraded = [];
        for (const [i, c] of route.fanout.entries()) {
          const outcome = outcomes[i];
          if (outcome.fail && c.required !== false) return failure(s, c.origin, outcome);
          if (outcome.fail) degraded.push(c.origin);
          else results[c.origin] = outcome.value;
        }
        return json(200, { results, degraded });
      }
      const origin = s.origins[route.origin];
      if (!(await origin.limit.acquire())) return failure(s, route.origin, { fail: "overloaded" });
      try {
        const controller = new AbortController();
        const timer = setTimeout(() => controller.abort(), origin.timeoutMs ?? 30000);
        let response;
        try {
          response = await fetch(origin.url + "/" + url.pathname.slice(route.prefix.length), { signal: controller.signal });
        } catch {
          return failure(s, route.origin, { fail: controller.signal.aborted ? "timeout" : "unreachable" });
        } finally {
          clearTimeout(timer);
        }
        const body = await response.arrayBuffer();
        return new Response(body, { status: response.status, headers: { "content-type": response.headers.get("content-type") ?? "" } });
      } finally {
        origin.limit.release();
      }
    } finally {
      s.global.release();
    }
  },
};
