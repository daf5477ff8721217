// Baseline 1 for benches/e2e: the same fan-out as the edgeshed worker's
// /aggregate route, in plain JavaScript with p-limit — at most
// `maxInFlight` calls per origin across the isolate (a module-scope limiter
// per origin), and an unbounded queue in front of each: no shedding.
// Bundled with esbuild by benches/e2e/run.mjs. Binding BENCH:
// { origins: { a: "http://127.0.0.1:port", ... }, maxInFlight: 4 }.
import pLimit from "p-limit";

let limits;

// workerd cancels a request that waits only on a promise that another
// request will settle ("your Worker's code had hung"): p-limit's queue is
// exactly that. A pending timer of the request's own keeps it alive while it
// waits (the same trick edgeshed uses for its queued waits).
const KEEPALIVE_MS = 1000;
function keepAlive(promise) {
  let timer;
  const tick = () => (timer = setTimeout(tick, KEEPALIVE_MS));
  tick();
  return promise.finally(() => clearTimeout(timer));
}

export default {
  async fetch(request, env) {
    const { origins, maxInFlight } = env.BENCH;
    limits ??= Object.fromEntries(Object.keys(origins).map((name) => [name, pLimit(maxInFlight)]));
    if (new URL(request.url).pathname !== "/aggregate") {
      return Response.json({ error: "not_found" }, { status: 404 });
    }
    try {
      const entries = await Promise.all(
        Object.entries(origins).map(([name, url]) =>
          keepAlive(
            limits[name](async () => {
              const response = await fetch(`${url}/${name}`);
              if (!response.ok) throw new Error(`${name} answered ${response.status}`);
              return [name, await response.json()];
            }),
          ),
        ),
      );
      return Response.json({ results: Object.fromEntries(entries), degraded: [] });
    } catch {
      return Response.json({ error: "bad_gateway" }, { status: 502 });
    }
  },
};
