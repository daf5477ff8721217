// The configurations the benches of issues 23 and 24 compare on one
// workload (criticality.mjs, codel.mjs, tenants.mjs): the edgeshed gateway
// with a given origin limit and routes, p-limit (workers/plimit.mjs: no
// shedding, an unbounded queue) and the Envoy-style stand-in
// (workers/envoy-style.mjs: a bounded FIFO, no priorities). The fan-out is
// the same everywhere: origins a and b, both required. Each configuration is
// { name, note, start(originUrl) → workerd, fresh (a new workerd per run),
// stats (it serves /__edgeshed/stats), headers (per traffic class: request
// headers only this configuration's clients send), contract (the statuses it
// may answer) }.
import { join } from "node:path";
import { ROOT, bundle, startWorkerd } from "../../support/workerd.mjs";
import { edgeshedBinding } from "./configs.mjs";

/** The edgeshed gateway: `limits` on each origin, `routes` (lib/configs.mjs aggregateRoute). */
export function edgeshed(name, { note, limits, routes, headers = {}, contract = [200, 503] }) {
  return {
    name,
    note,
    stats: true,
    headers,
    contract: new Set(contract),
    binding: (originUrl) => edgeshedBinding(originUrl, limits, routes),
    start(originUrl) {
      return startWorkerd({ scriptPath: join(ROOT, "worker/index.mjs"), bindings: { EDGESHED: this.binding(originUrl) } });
    },
  };
}

const origins = (originUrl) => ({ a: originUrl("a"), b: originUrl("b") });
let plimitBundle;

/** p-limit: `slots` calls per origin at once, an unbounded queue, serving `paths`. */
export function pLimit(slots, paths) {
  return {
    name: "p-limit",
    note: `pLimit(${slots}) per origin, unbounded FIFO queue, no shedding`,
    fresh: true,
    headers: {},
    contract: new Set([200]),
    async start(originUrl) {
      plimitBundle ??= bundle(join(ROOT, "benches/e2e/workers/plimit.mjs"));
      return startWorkerd({ ...(await plimitBundle), bindings: { BENCH: { origins: origins(originUrl), maxInFlight: slots, paths } } });
    },
  };
}

/** The Envoy-style stand-in: `slots` calls per origin at once, at most `pending` waiting, serving `paths`. */
export function envoyStyle(slots, pending, paths) {
  return {
    name: "envoy-style-js",
    note: `plain JS, not Envoy: per origin ${slots} at once (max_requests) + ${pending} pending (max_pending_requests), FIFO, no priorities, overflow 503 at once`,
    headers: {},
    contract: new Set([200, 503]),
    start: (originUrl) =>
      startWorkerd({
        scriptPath: join(ROOT, "benches/e2e/workers/envoy-style.mjs"),
        bindings: { BENCH: { origins: origins(originUrl), maxInFlight: slots, maxPending: pending, paths } },
      }),
  };
}

/** `configs` narrowed to the names in `only` (a list, or null for all); an unknown name is an error naming it. */
export function choose(configs, only) {
  if (!only) return configs;
  const unknown = only.filter((name) => !configs.some((c) => c.name === name));
  if (unknown.length > 0) {
    throw new Error(`--only: no configuration named ${unknown.join(", ")} (known: ${configs.map((c) => c.name).join("; ")})`);
  }
  return configs.filter((c) => only.includes(c.name));
}
