// Shared by benches/budget/run.mjs and benches/e2e/fleet.mjs: a fleet of
// gateway isolates in one Miniflare (the production entry, worker/index.mjs),
// all bound to one EdgeshedBudget namespace that a separate worker
// ("budget-host") defines, each gateway on its own socket so the load goes
// to workerd directly, not through Miniflare's dispatch proxy.
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { ROOT, compat } from "./workerd.mjs";

/** Starts `gateways` isolates with `binding` as EDGESHED; resolves to { mf, urls }. */
export async function startFleet(binding, gateways = 3) {
  const host = { className: "EdgeshedBudget", useSQLite: true };
  const worker = (name, durableObject, socket) => ({
    name,
    modules: true,
    modulesRoot: ROOT,
    scriptPath: join(ROOT, "worker/index.mjs"),
    modulesRules: [
      { type: "ESModule", include: ["**/*.js", "**/*.mjs"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    ...compat(),
    bindings: { EDGESHED: binding },
    durableObjects: { EDGESHED_BUDGET: durableObject },
    ...(socket ? { unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }] } : {}),
  });
  const names = Array.from({ length: gateways }, (_, i) => `gw${i}`);
  const mf = new Miniflare({
    cf: false,
    handleStructuredLogs: () => {},
    workers: [worker("budget-host", host, false), ...names.map((n) => worker(n, { ...host, scriptName: "budget-host" }, true))],
  });
  await mf.ready;
  const urls = await Promise.all(names.map((n) => mf.unsafeGetDirectURL(n)));
  return { mf, urls };
}
