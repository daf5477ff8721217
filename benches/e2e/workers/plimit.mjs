// Baseline 1 for benches/e2e: the same fan-out as the edgeshed worker's
// /aggregate route, in plain JavaScript with p-limit — at most
// `maxInFlight` calls per origin across the isolate (a module-scope limiter
// per origin), and an unbounded queue in front of each: no shedding.
// Bundled with esbuild by benches/e2e/run.mjs. Binding BENCH:
// { origins: { a: "http://127.0.0.1:port", ... }, maxInFlight: 4 }, and
// optionally `paths` (default ["/aggregate"]): the paths it serves that way.
import pLimit from "p-limit";
import { keepAlive } from "./keep-alive.mjs";

let limits;

export default {
  async fetch(request, env) {
    const { origins, maxInFlight, paths = ["/aggregate"] } = env.BENCH;
    limits ??= Object.fromEntries(Object.keys(origins).map((name) => [name, pLimit(maxInFlight)]));
    if (!paths.includes(new URL(request.url).pathname)) {
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
