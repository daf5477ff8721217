// Several gateway isolates in one workerd (Miniflare): `gateways` workers
// running the same script, all bound to one EdgeshedBudget namespace that a
// separate worker ("budget-host") defines, so the object lives apart from
// every gateway.
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { ROOT, wranglerToml } from "./worker.mjs";

const BASE = "http://edgeshed.test";
const ENTRY = "tests/worker/support/budget-entry.mjs";

/**
 * Starts the fleet with `config` as every gateway's EDGESHED binding, or
 * `configs[i]` as gateway i's (two versions of a deployment serving at
 * once), with `bindings[i]` added to gateway i's env. Each gateway gets
 * wrangler.toml's version metadata binding (its own random id, the time it
 * started) unless `bindings[i]` gives one.
 */
export async function startFleet(config, { gateways = 3, configs = [], bindings = [] } = {}) {
  const toml = wranglerToml();
  const versionBinding = toml.version_metadata?.binding;
  const worker = (name, durableObject, i) => ({
    name,
    modules: true,
    modulesRoot: ROOT,
    scriptPath: join(ROOT, ENTRY),
    modulesRules: [
      { type: "ESModule", include: ["**/*.js", "**/*.mjs"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    compatibilityDate: toml.compatibility_date,
    compatibilityFlags: toml.compatibility_flags,
    bindings: { ...(bindings[i] ?? {}), EDGESHED: configs[i] ?? config },
    ...(versionBinding && bindings[i]?.[versionBinding] === undefined ? { versionMetadata: versionBinding } : {}),
    durableObjects: { EDGESHED_BUDGET: durableObject },
  });
  const names = Array.from({ length: gateways }, (_, i) => `gw${i}`);
  const host = { className: "EdgeshedBudget", useSQLite: true };
  const remote = { ...host, scriptName: "budget-host" };
  const logs = [];
  const mf = new Miniflare({
    cf: false,
    handleStructuredLogs: ({ level, message }) => {
      logs.push({ level, message });
    },
    workers: [worker("budget-host", host, -1), ...names.map((name, i) => worker(name, remote, i))],
  });
  await mf.ready;
  const fetchers = await Promise.all(names.map((name) => mf.getWorker(name)));
  const hostFetcher = await mf.getWorker("budget-host");

  /** `path` on gateway `i`, read whole: { status, headers, text, json }. */
  const get = async (i, path, init) => {
    const response = await fetchers[i].fetch(BASE + path, init);
    const text = await response.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json };
  };
  return {
    mf,
    logs,
    size: gateways,
    get,
    /** Gateway `i`'s `/__edgeshed/stats`. */
    async stats(i) {
      const r = await get(i, "/__edgeshed/stats");
      if (r.status !== 200) throw new Error(`stats of gw${i}: ${r.status} ${r.text}`);
      return r.json;
    },
    /** Gateway `i`'s `/__edgeshed/metrics` text. */
    async metrics(i) {
      return (await get(i, "/__edgeshed/metrics")).text;
    },
    /** The fleet view (`/__edgeshed/budget`, asked through gateway `i`). */
    async budget(i = 0) {
      const r = await get(i, "/__edgeshed/budget");
      if (r.status !== 200) throw new Error(`budget: ${r.status} ${r.text}`);
      return r.json;
    },
    /** The object of `origin` loses its memory. */
    async reset(origin) {
      await (await hostFetcher.fetch(`${BASE}/__test/reset?origin=${origin}`)).text();
    },
    /** Gateway `i`'s isolate stops: no answers, no calls to the object. */
    async kill(i) {
      await (await fetchers[i].fetch(`${BASE}/__test/die`)).text();
    },
    dispose: () => mf.dispose(),
  };
}

/** Polls `probe()` until `condition(value)` holds; fails after `timeoutMs`. */
export async function eventually(probe, condition, { timeoutMs = 5000, what = "condition" } = {}) {
  const start = Date.now();
  let last;
  for (;;) {
    last = await probe();
    if (condition(last)) return { value: last, waitedMs: Date.now() - start };
    if (Date.now() - start > timeoutMs) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(last)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
