// The real worker (worker/index.mjs + dist/worker wasm) in real workerd via
// Miniflare, with the compatibility settings of wrangler.toml.
import { request as httpRequest } from "node:http";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { unstable_readConfig } from "wrangler";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

let wranglerConfig;
/** wrangler.toml as wrangler reads it (read once per process). */
export function wranglerToml() {
  wranglerConfig ??= unstable_readConfig({ config: join(ROOT, "wrangler.toml") });
  return wranglerConfig;
}

/** wrangler.toml's `[[durable_objects.bindings]]` as Miniflare options. */
function wranglerDurableObjects(config) {
  const sqlite = new Set((config.migrations ?? []).flatMap((m) => m.new_sqlite_classes ?? []));
  return Object.fromEntries(
    (config.durable_objects?.bindings ?? []).map((b) => [b.name, { className: b.class_name, useSQLite: sqlite.has(b.class_name) }]),
  );
}

/** Marks "no EDGESHED binding at all" (the worker then fails closed: 500 config). */
export const NO_BINDING = Symbol("no binding");

const BASE = "http://edgeshed.test";

/** A worker that logs the `m` query parameter: a sync point for `worker.logged()`. */
const MARKER_WORKER = (config) => ({
  name: "log-marker",
  modules: true,
  script: `export default { fetch(request) {
    console.log(new URL(request.url).searchParams.get("m"));
    return new Response("ok");
  } };`,
  compatibilityDate: config.compatibility_date,
});
let markers = 0;

/**
 * Starts a Miniflare instance running the worker with `binding` as
 * `env.EDGESHED` (an object, a JSON string, or NO_BINDING). The limiters
 * and the configuration live in the isolate: one instance per configuration.
 * A test that reads `/__edgeshed/*` opens it in its configuration
 * (`statsPublic: true`, or `statsToken` and the same `statsToken` here).
 * What the worker logs (`console.*`) is collected instead of printed: read
 * it with `await worker.logged()`. `scriptPath` (relative to the repository)
 * and `bindings` (more env entries) are for test entries such as
 * `support/hostile-env.mjs`; `ratelimits` are Miniflare's Rate Limiting
 * bindings (`{ NAME: { simple: { limit, period } } }`).
 */
export async function startWorker(binding, { statsToken, scriptPath = "worker/index.mjs", bindings = {}, durableObjects, ratelimits } = {}) {
  const wasm = join(ROOT, "dist/worker/edgeshed_bg.wasm");
  if (!existsSync(wasm)) throw new Error(`${wasm} is missing: run ./scripts/build-worker.sh first`);
  const config = wranglerToml();
  const logs = [];
  const workerOptions = {
    name: "edgeshed",
    modules: true,
    modulesRoot: ROOT,
    scriptPath: join(ROOT, scriptPath),
    modulesRules: [
      { type: "ESModule", include: ["**/*.js", "**/*.mjs"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    compatibilityDate: config.compatibility_date,
    compatibilityFlags: config.compatibility_flags,
    bindings: binding === NO_BINDING ? bindings : { ...bindings, EDGESHED: binding },
    // wrangler.toml's [version_metadata], as `wrangler dev` gives it (a
    // random id, the time it started), unless `bindings` has its own.
    ...(config.version_metadata?.binding && bindings[config.version_metadata.binding] === undefined
      ? { versionMetadata: config.version_metadata.binding }
      : {}),
    // The fleet budget's namespace, as wrangler.toml declares it (the
    // production entry exports the class; other entries bind none unless asked).
    durableObjects: durableObjects ?? (scriptPath === "worker/index.mjs" ? wranglerDurableObjects(config) : {}),
    // Rate Limiting bindings (wrangler.toml's [[ratelimits]]), if a test asks.
    ...(ratelimits ? { ratelimits } : {}),
  };
  const mf = new Miniflare({
    cf: false,
    handleStructuredLogs({ level, message }) {
      logs.push({ level, message });
    },
    // The marker worker shares workerd (and its log stream) with the gateway:
    // when a line it logs arrives, every line logged before it has too.
    workers: [workerOptions, MARKER_WORKER(config)],
  });
  const ready = await mf.ready;
  const auth = statsToken ? { authorization: `Bearer ${statsToken}` } : {};

  const worker = {
    mf,
    url: ready,
    /**
     * Everything the gateway has logged (`console.*`) up to now, as
     * `{ level, message }`: a marker is logged after it through the same
     * workerd log stream, and waited for (bounded).
     */
    async logged({ timeoutMs = 5000 } = {}) {
      const marker = `edgeshed-test-marker-${process.pid}-${++markers}`;
      const fetcher = await mf.getWorker("log-marker");
      await (await fetcher.fetch(`http://marker.test/?m=${marker}`)).text();
      const start = Date.now();
      while (!logs.some((l) => l.message.includes(marker))) {
        if (Date.now() - start > timeoutMs) throw new Error(`the log marker never arrived; logs: ${JSON.stringify(logs)}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return logs.filter((l) => !l.message.includes("edgeshed-test-marker-"));
    },
    /** `dispatchFetch` of `path` (a Response; the body is not read). */
    fetch(path, init = {}) {
      return mf.dispatchFetch(BASE + path, init);
    },
    /** Fetches `path` and reads the whole answer: { status, headers, text, json }. */
    async get(path, init = {}) {
      const response = await worker.fetch(path, init);
      const text = await response.text();
      let json;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: response.status, headers: response.headers, text, json };
    },
    /** `/__edgeshed/stats` as an object. */
    async stats() {
      const answer = await worker.get("/__edgeshed/stats", { headers: auth });
      if (answer.status !== 200) throw new Error(`stats answered ${answer.status}: ${answer.text}`);
      return answer.json;
    },
    /** The `edgeshed_held_bodies` gauge of /__edgeshed/metrics (proxied bodies holding permits). */
    async heldBodies() {
      const answer = await worker.get("/__edgeshed/metrics", { headers: auth });
      if (answer.status !== 200) throw new Error(`metrics answered ${answer.status}: ${answer.text}`);
      const line = answer.text.split("\n").find((l) => l.startsWith("edgeshed_held_bodies "));
      if (!line) throw new Error(`no edgeshed_held_bodies in the metrics:\n${answer.text}`);
      return Number(line.split(" ")[1]);
    },
    /**
     * Polls the stats until `condition(stats)` holds; fails after `timeoutMs`
     * with the last stats seen.
     */
    async until(condition, { timeoutMs = 3000, what = "condition" } = {}) {
      const start = Date.now();
      let last;
      for (;;) {
        last = await worker.stats();
        if (condition(last)) return last;
        if (Date.now() - start > timeoutMs) {
          throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; stats: ${JSON.stringify(last)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    /**
     * A request sent with node:http to Miniflare's socket, with `path` sent
     * byte for byte (no URL normalisation on the client side).
     */
    raw(path, { method = "GET", headers = {}, body } = {}) {
      return new Promise((resolve, reject) => {
        const req = httpRequest(
          new URL(ready),
          { method, path, headers: { "accept-encoding": "identity", ...headers } },
          (res) => {
            const chunks = [];
            res.on("data", (c) => chunks.push(c));
            res.on("end", () => {
              const text = Buffer.concat(chunks).toString("utf8");
              let json;
              try {
                json = JSON.parse(text);
              } catch {
                json = undefined;
              }
              resolve({ status: res.statusCode, headers: res.headers, text, json });
            });
            res.on("error", reject);
          },
        );
        req.on("error", reject);
        req.end(body);
      });
    },
    async dispose() {
      await mf.dispose();
    },
  };
  return worker;
}

/** True when every scope (global and each origin) has nothing in flight or queued. */
export function idle(stats) {
  const scopes = [stats.global, ...Object.values(stats.origins)];
  return scopes.every((s) => s.inFlight === 0 && s.queued === 0);
}

/** `Server-Timing` as a Map of name -> { dur, desc }. */
export function serverTiming(header) {
  const entries = new Map();
  for (const part of (header ?? "").split(",")) {
    const [name, ...params] = part.trim().split(";");
    if (!name) continue;
    const entry = {};
    for (const param of params) {
      const [key, value] = param.split("=");
      entry[key.trim()] = key.trim() === "dur" ? Number(value) : value?.replace(/^"|"$/g, "");
    }
    entries.set(name, entry);
  }
  return entries;
}

/** An origin entry of the configuration for `origin` (a started origin server). */
export function originConfig(origin, limits = {}) {
  return { url: origin.url, ...limits };
}
