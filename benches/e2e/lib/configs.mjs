// The configurations compared side by side: the edgeshed worker with a
// fixed or an adaptive origin limit, the p-limit and naive baselines, and
// the floor worker (answers 503 at once: the latency floor of a rejection).
// The fan-out is the same everywhere: GET /aggregate calls origins a and b,
// both required.
import { join } from "node:path";
import { ROOT, bundle, startWorkerd } from "../../support/workerd.mjs";

/** The fan-out route on `path` to origins a and b (both required), with the route keys `extra`. */
export function aggregateRoute(path = "/aggregate", extra = {}) {
  return {
    path,
    ...extra,
    fanout: [
      { origin: "a", path: "/a", required: true },
      { origin: "b", path: "/b", required: true },
    ],
  };
}

/** The edgeshed binding with `limits` (the limit keys of each origin) and `routes` (default: GET /aggregate). */
export function edgeshedBinding(originUrl, limits, routes = [aggregateRoute()]) {
  const origin = (name) => ({ url: originUrl(name), timeoutMs: 30_000, ...limits });
  return {
    retryAfterSeconds: 1,
    statsPublic: true, // the bench reads the origin limits after each run
    origins: { a: origin("a"), b: origin("b") },
    routes,
  };
}

/**
 * Every configuration, in the order of the tables: { name, limits (the
 * origin keys, for edgeshed), start(originUrl) → workerd, contract (the
 * statuses it may answer), floor (calibration only) }. `slots` is the
 * origins' concurrency: the fixed limits are set to it (hand-tuned to the
 * truth, as today); the adaptive ones get only the algorithm.
 */
export function configurations(slots, latencyMs) {
  const edgeshed = (name, limits, note) => ({
    name,
    note,
    limits,
    contract: new Set([200, 503]),
    start: (originUrl) =>
      startWorkerd({
        scriptPath: join(ROOT, "worker/index.mjs"),
        bindings: { EDGESHED: edgeshedBinding(originUrl, limits) },
      }),
  });
  const queue = { maxQueue: slots, queueTimeoutMs: latencyMs };
  const baseline = (originUrl) => ({ origins: { a: originUrl("a"), b: originUrl("b") }, maxInFlight: slots });
  const plimit = bundle(join(ROOT, "benches/e2e/workers/plimit.mjs"));
  return [
    edgeshed("fixed", { maxInFlight: slots, maxQueue: 0 }, `maxInFlight ${slots}, no queue`),
    edgeshed("fixed+queue", { maxInFlight: slots, ...queue }, `maxInFlight ${slots}, maxQueue ${slots}, ${latencyMs} ms`),
    edgeshed("aimd", { adaptive: { algorithm: "aimd" }, maxQueue: 0 }, "adaptive, defaults, no queue"),
    edgeshed("gradient2", { adaptive: { algorithm: "gradient2" }, maxQueue: 0 }, "adaptive, defaults, no queue"),
    edgeshed("vegas", { adaptive: { algorithm: "vegas" }, maxQueue: 0 }, "adaptive, defaults, no queue"),
    edgeshed("gradient2+queue", { adaptive: { algorithm: "gradient2" }, ...queue }, `adaptive, maxQueue ${slots}, ${latencyMs} ms`),
    {
      name: "p-limit",
      fresh: true,
      note: `pLimit(${slots}) per origin, unbounded queue`,
      contract: new Set([200]),
      async start(originUrl) {
        return startWorkerd({ ...(await plimit), bindings: { BENCH: baseline(originUrl) } });
      },
    },
    {
      name: "naive",
      fresh: true,
      note: "no limit",
      contract: new Set([200]),
      start: (originUrl) =>
        startWorkerd({ scriptPath: join(ROOT, "benches/e2e/workers/naive.mjs"), bindings: { BENCH: baseline(originUrl) } }),
    },
    {
      name: "floor 503",
      note: "answers 503 at once (calibration)",
      floor: true,
      contract: new Set([503]),
      start: () =>
        startWorkerd({
          script: `export default { fetch() { return new Response('{"error":"overloaded"}', { status: 503, headers: { "retry-after": "1" } }); } };`,
        }),
    },
  ];
}
