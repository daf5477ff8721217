// Issue 30's noisy tenant, end to end on workerd: ten quiet tenants that
// offer half the capacity between them (--quiet-share 0.05 each) and one
// noisy tenant at 1×, 3×, 10× and 30× of capacity, keyed by a header, plus a
// keyless flood (the noisy requests without the header) at 10×. Goals at
// every level: the quiet tenants keep ≥ 0.95 of the goodput they get with no
// noisy tenant (level 0, the reference row of each configuration), quiet p99
// ≤ 2× unloaded, and the origins stay busy (≥ 0.9 of their slots used:
// work-conserving).
//
//   node benches/e2e/tenants.mjs                    # every configuration, noisy 0 (reference), 1, 3, 10, 30×, keyless 10× (~5 min)
//   node benches/e2e/tenants.mjs --quick            # 2 s per level, noisy 0, 1, 10×, keyless 10×
//   node benches/e2e/tenants.mjs --only fairness,no-fairness --levels 0,1,10 --keyless 10,30 --quiet-share 0.1
//   node benches/e2e/tenants.mjs --json out.json --md out.md
//
// Origins a and b (benches/e2e/origin.mjs): 4 requests at once, 50 ms each,
// so 80 req/s through the fan-out GET /aggregate. Eleven open-loop Poisson
// streams (lib/classes.mjs), each its own clients: q0 … q9 at QUIET_SHARE ×
// capacity each with `x-tenant: q<i>` (class "quiet"), and `noisy` at the
// level's multiple (class "noisy"), with `x-tenant: noisy`, or without the
// header in a keyless run (a flood that leaves the key out is one keyless
// key of its own). Level 0 leaves the noisy tenant out. Side by side, in
// one run:
// - fairness: the gateway with the route's "fairness": {"key": "header:x-tenant"}
//   (fair queueing: per-key flows, 429 fair_share for a key over its share);
// - fairness+rate: the same plus "rateLimit": {"key": "header:x-tenant",
//   "perSecond": RATE, "burst": RATE} (RATE: twice a quiet tenant's rate);
// - no-fairness: the same gateway, no per-key keys;
// - p-limit: workers/plimit.mjs, 4 per origin, unbounded queue.
// Every gateway configuration: maxInFlight 4, maxQueue 4, queueTimeoutMs 50
// per origin. A configuration whose keys this build rejects (500
// {"error":"config"}) is skipped with the gateway's message. Figures per
// class (the worst quiet tenant too): goodput (2xx ÷ sent) and relative to
// the configuration's level 0, 2xx p50/p99, refusals by status and reason;
// origin a's busy fraction (mean active ÷ slots); the isolate's CPU.
// Benches are not tests: none runs in scripts/test.sh.
import { classFigures, mixedLoad, outsideContract } from "./lib/classes.mjs";
import { aggregateRoute } from "./lib/configs.mjs";
import { CAPACITY, LATENCY_MS, LIMITS, LIMITS_NOTE, SLOTS, benchOptions, option, report, runAll, sequentialLatency, unloadedLatency } from "./lib/levels.mjs";
import { startOrigins } from "./lib/origins.mjs";
import { choose, edgeshed, pLimit } from "./lib/peers.mjs";

const args = process.argv.slice(2);
const OPTIONS = benchOptions(args, { levels: "0,1,3,10,30", quickLevels: "0,1,10" });
const { levelS: LEVEL_S, levels: LEVELS, warmupS: WARMUP_S } = OPTIONS;
/** The levels of the keyless flood (`--keyless none` for none). */
const KEYLESS = option(args, "--keyless", "10")
  .split(",")
  .filter((x) => x !== "none" && x !== "")
  .map(Number);
/** Every run: the noisy tenant at each level (0 first: the reference), then the keyless floods. */
const RUNS = [...LEVELS.map((level) => ({ level, keyless: false })), ...KEYLESS.map((level) => ({ level, keyless: true }))];

const QUIET_TENANTS = 10;
const QUIET_SHARE = Number(option(args, "--quiet-share", 0.05));
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

/** The quiet tenants and the noisy one at `level`× (none at 0), sending its key unless `keyless`. */
const streams = ({ level, keyless }) => [
  ...Array.from({ length: QUIET_TENANTS }, (_, i) => ({ name: `q${i}`, class: "quiet", rate: QUIET_SHARE * CAPACITY, headers: { [KEY_HEADER]: `q${i}` } })),
  { name: "noisy", class: "noisy", rate: level * CAPACITY, headers: keyless ? {} : { [KEY_HEADER]: "noisy" } },
].map((s) => ({ ...s, path: "/aggregate" }));
const runName = (run) => `${run.level}×${run.keyless ? " keyless" : ""}`;

const origins = await startOrigins({ names: ["a", "b"], concurrency: SLOTS, latencyMs: LATENCY_MS });
const started = Date.now();
const unloaded = await unloadedLatency(choose(CONFIGS, ["no-fairness"])[0], origins, "/aggregate");
console.log(
  `origins a, b: ${SLOTS} slots × ${LATENCY_MS} ms → capacity ${CAPACITY} req/s; ${QUIET_TENANTS} quiet tenants at ${QUIET_SHARE}× each, ` +
    `noisy ${RUNS.map(runName).join(", ")}; ${LEVEL_S} s per level; unloaded p50 ${unloaded.p50.toFixed(1)} ms`,
);

const { rows, skipped } = await runAll(chosen, RUNS, (config) => ({
  origins,
  warm: async (url, fresh) => {
    await sequentialLatency(url, "/aggregate", { n: 20, skip: 20, headers: { [KEY_HEADER]: "warm-up" } });
    await mixedLoad(url, streams({ level: fresh ? 1 : Math.max(...LEVELS), keyless: false }), fresh ? 1 : WARMUP_S, { seed: 99 });
  },
  load: (w, run) => mixedLoad(w.url, streams(run), LEVEL_S, { seed: 1000 * run.level + (run.keyless ? 7 : 1) }),
  row: (run, load, extras) => {
    const classes = { quiet: classFigures(load, "quiet"), ...(run.level > 0 ? { noisy: classFigures(load, "noisy") } : {}) };
    const busy = extras.origin.meanActive / SLOTS;
    return { config: config.name, level: run.level, keyless: run.keyless, classes, busy, outsideContract: outsideContract(classes, config.contract), ...extras };
  },
  log: (r) => {
    const q = r.classes.quiet;
    const n = r.classes.noisy;
    console.log(
      `${r.config.padEnd(14)} noisy ${runName(r).padStart(11)} | quiet goodput ${q.goodput.toFixed(3)} (worst ${q.worstGoodput.toFixed(3)}) p99 ${q.p99?.toFixed(1)} ms ${JSON.stringify(q.reasons)}` +
        (n ? ` | noisy ${(n.okRps / CAPACITY).toFixed(2)}× ${JSON.stringify(n.reasons)}` : "") +
        ` | origin a busy ${r.busy.toFixed(2)} (peak ${r.origin.peakActive}) | CPU ${r.cpu.isolate.toFixed(2)}${r.outsideContract ? ` | OUTSIDE ${r.outsideContract}` : ""}`,
    );
  },
}));

// Quiet goodput relative to the same configuration with no noisy tenant (its level-0 row).
for (const r of rows) {
  const reference = rows.find((x) => x.config === r.config && x.level === 0 && !x.keyless);
  r.quietRelative = reference ? r.classes.quiet.goodput / reference.classes.quiet.goodput : NaN;
}

const meta = {
  keyless: KEYLESS,
  quietTenants: QUIET_TENANTS,
  quietShare: QUIET_SHARE,
  keyHeader: KEY_HEADER,
  unloaded,
};
report({ bench: "noisy-tenant", meta, rows, skipped }, { started, options: OPTIONS, configs: chosen });
origins.close();
