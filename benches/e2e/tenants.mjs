// Issue 24's noisy tenant, end to end on workerd: ten quiet tenants at 0.1×
// the capacity each and one noisy tenant at 1× to 10×, keyed by a header.
// Goal: the quiet tenants keep ≥ 0.95 of what they offer, with p99 ≤ 2×
// unloaded, and the noisy tenant gets 429s.
//
//   node benches/e2e/tenants.mjs                    # every configuration, noisy 0 (reference), 1, 3, 10× (~4 min)
//   node benches/e2e/tenants.mjs --quick            # 2 s per level, noisy 1× and 10×
//   node benches/e2e/tenants.mjs --only fairness,no-fairness --levels 0,1,10 --quiet-share 0.05
//   node benches/e2e/tenants.mjs --json out.json --md out.md
//
// Origins a and b (benches/e2e/origin.mjs): 4 requests at once, 50 ms each,
// so 80 req/s through the fan-out GET /aggregate. Eleven open-loop Poisson
// streams (lib/classes.mjs), each its own clients, each sending
// `x-tenant: <name>`: q0 … q9 at QUIET_SHARE × capacity each (class
// "quiet"), `noisy` at the level's multiple (class "noisy"; level 0 leaves
// it out: what the quiet tenants get alone). Note that ten tenants at 0.1×
// offer the whole capacity between them, so even alone they run the
// origins at 100 % (the level-0 row shows what that costs);
// --quiet-share 0.05 gives them half of it. Side by side:
// - fairness: the gateway with the route's "fairness": {"key": "header:x-tenant"}
//   (the design contract, "Criticality, fairness and rate limits"): a key over its
//   fair share while others wait gets 429;
// - fairness+rate: the same plus "rateLimit": {"key": "header:x-tenant",
//   "perSecond": RATE, "burst": RATE} (RATE: twice a quiet tenant's rate);
// - no-fairness: the same gateway, no per-key keys;
// - p-limit: workers/plimit.mjs, 4 per origin, unbounded queue.
// Every gateway configuration: maxInFlight 4, maxQueue 4, queueTimeoutMs 50
// per origin. A configuration whose keys this build rejects (500
// {"error":"config"}) is skipped with the gateway's message. Figures per
// class (the worst quiet tenant too): goodput (2xx ÷ sent), 2xx p50/p99,
// refusals by status and reason; origin a's concurrency; the isolate's CPU.
// Benches are not tests: none runs in scripts/test.sh.
import { classFigures, mixedLoad, outsideContract } from "./lib/classes.mjs";
import { aggregateRoute } from "./lib/configs.mjs";
import { CAPACITY, LATENCY_MS, LIMITS, LIMITS_NOTE, SLOTS, benchOptions, option, report, runAll, sequentialLatency, unloadedLatency } from "./lib/levels.mjs";
import { startOrigins } from "./lib/origins.mjs";
import { choose, edgeshed, pLimit } from "./lib/peers.mjs";

const args = process.argv.slice(2);
const OPTIONS = benchOptions(args, { levels: "0,1,3,10", quickLevels: "1,10" });
const { quick: QUICK, levelS: LEVEL_S, levels: LEVELS, warmupS: WARMUP_S } = OPTIONS;

const QUIET_TENANTS = 10;
const QUIET_SHARE = Number(option(args, "--quiet-share", 0.1));
const KEY_HEADER = "x-tenant";
const KEY = `header:${KEY_HEADER}`;
const RATE = 2 * QUIET_SHARE * CAPACITY;

const CONFIGS = [
  edgeshed("fairness", {
    note: `gateway, route "fairness": {"key": "${KEY}"}; ${LIMITS_NOTE}`,
    limits: LIMITS,
    routes: [aggregateRoute("/aggregate", { fairness: { key: KEY } })],
    contract: [200, 429, 503],
  }),
  edgeshed("fairness+rate", {
    note: `gateway, fairness as above and "rateLimit": {"key": "${KEY}", "perSecond": ${RATE}, "burst": ${RATE}}; ${LIMITS_NOTE}`,
    limits: LIMITS,
    routes: [aggregateRoute("/aggregate", { fairness: { key: KEY }, rateLimit: { key: KEY, perSecond: RATE, burst: RATE } })],
    contract: [200, 429, 503],
  }),
  edgeshed("no-fairness", { note: `gateway, no per-key keys; ${LIMITS_NOTE}`, limits: LIMITS }),
  pLimit(SLOTS, ["/aggregate"]),
];
const chosen = choose(CONFIGS, OPTIONS.only);

/** The quiet tenants and the noisy one at `level`× (none at 0). */
const streams = (level) => [
  ...Array.from({ length: QUIET_TENANTS }, (_, i) => ({ name: `q${i}`, class: "quiet", rate: QUIET_SHARE * CAPACITY })),
  { name: "noisy", class: "noisy", rate: level * CAPACITY },
].map((s) => ({ ...s, path: "/aggregate", headers: { [KEY_HEADER]: s.name } }));

const origins = await startOrigins({ names: ["a", "b"], concurrency: SLOTS, latencyMs: LATENCY_MS });
const started = Date.now();
const unloaded = await unloadedLatency(choose(CONFIGS, ["no-fairness"])[0], origins, "/aggregate");
console.log(
  `origins a, b: ${SLOTS} slots × ${LATENCY_MS} ms → capacity ${CAPACITY} req/s; ${QUIET_TENANTS} quiet tenants at ${QUIET_SHARE}× each, ` +
    `noisy ${LEVELS.join(", ")}×; ${LEVEL_S} s per level; unloaded p50 ${unloaded.p50.toFixed(1)} ms`,
);

const { rows, skipped } = await runAll(chosen, LEVELS, (config) => ({
  origins,
  warm: async (url, fresh) => {
    await sequentialLatency(url, "/aggregate", { n: 20, skip: 20, headers: { [KEY_HEADER]: "warm-up" } });
    await mixedLoad(url, streams(fresh ? 1 : Math.max(...LEVELS)), fresh ? 1 : WARMUP_S, { seed: 99 });
  },
  load: (w, level) => mixedLoad(w.url, streams(level), LEVEL_S, { seed: 1000 * level + 1 }),
  row: (level, load, extras) => {
    const classes = { quiet: classFigures(load, "quiet"), ...(level > 0 ? { noisy: classFigures(load, "noisy") } : {}) };
    return { config: config.name, level, classes, outsideContract: outsideContract(classes, config.contract), ...extras };
  },
  log: (r) => {
    const q = r.classes.quiet;
    const n = r.classes.noisy;
    console.log(
      `${r.config.padEnd(14)} noisy ${String(r.level).padStart(2)}× | quiet goodput ${q.goodput.toFixed(3)} (worst ${q.worstGoodput.toFixed(3)}) p99 ${q.p99?.toFixed(1)} ms ${JSON.stringify(q.reasons)}` +
        (n ? ` | noisy ${(n.okRps / CAPACITY).toFixed(2)}× ${JSON.stringify(n.reasons)}` : "") +
        ` | origin a ${r.origin.meanActive.toFixed(1)}/${r.origin.peakActive} | CPU ${r.cpu.isolate.toFixed(2)}${r.outsideContract ? ` | OUTSIDE ${r.outsideContract}` : ""}`,
    );
  },
}));

const meta = {
  quietTenants: QUIET_TENANTS,
  quietShare: QUIET_SHARE,
  keyHeader: KEY_HEADER,
  unloaded,
};
report({ bench: "noisy-tenant", meta, rows, skipped }, { started, options: OPTIONS, configs: chosen });
origins.close();
