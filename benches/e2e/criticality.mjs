// Issue 23's flood, end to end on workerd: critical traffic at 0.5× the
// capacity plus sheddable traffic at 1× to 10×. Goal: the critical traffic
// keeps ≥ 0.99 of what it offers, with p99 ≤ 2× unloaded, at every level.
//
//   node benches/e2e/criticality.mjs                   # every configuration, levels 1, 3, 10 (~4 min)
//   node benches/e2e/criticality.mjs --quick           # 2 s per level, levels 1 and 10
//   node benches/e2e/criticality.mjs --only criticality,no-criticality --levels 1,2,5,10 --duration 6
//   node benches/e2e/criticality.mjs --json out.json --md out.md
//
// Origins a and b (benches/e2e/origin.mjs) serve 4 requests at once in 50 ms
// each: the fan-out's capacity is 80 req/s. Two open-loop Poisson streams
// (lib/classes.mjs), each its own clients: critical on GET /critical at
// 0.5× capacity, sheddable on GET /batch at the level's multiple. Side by
// side on that workload:
// - criticality: the gateway with the routes' "criticality": "critical" and
//   "sheddable" (the design contract, "Criticality, fairness and rate limits");
// - criticality-header: both routes "critical", the sheddable clients send
//   `edgeshed-criticality: sheddable` (the header may lower, never raise);
// - no-criticality: the same gateway with no criticality (one class);
// - p-limit: workers/plimit.mjs, 4 per origin, unbounded queue;
// - envoy-style-js: workers/envoy-style.mjs, 4 per origin + 4 pending, FIFO,
//   no priorities (a plain-JS stand-in, not Envoy).
// Every gateway configuration: maxInFlight 4, maxQueue 4, queueTimeoutMs 50
// per origin. A configuration whose keys this build rejects (500
// {"error":"config"}) is skipped with the gateway's message. Figures per
// class: goodput (2xx ÷ sent), 2xx p50/p99, refusals by status and reason;
// origin a's concurrency; the gateway isolate's CPU. A fresh workerd per run
// for p-limit (its backlog would spill over), one warmed-up workerd per
// configuration otherwise. Benches are not tests: none runs in scripts/test.sh.
import { classFigures, mixedLoad, outsideContract } from "./lib/classes.mjs";
import { aggregateRoute } from "./lib/configs.mjs";
import { CAPACITY, LATENCY_MS, LIMITS, LIMITS_NOTE, SLOTS, benchOptions, report, runAll, sequentialLatency, unloadedLatency } from "./lib/levels.mjs";
import { startOrigins } from "./lib/origins.mjs";
import { choose, edgeshed, envoyStyle, pLimit } from "./lib/peers.mjs";

const args = process.argv.slice(2);
const OPTIONS = benchOptions(args, { levels: "1,3,10", quickLevels: "1,10" });
const { quick: QUICK, levelS: LEVEL_S, levels: LEVELS, warmupS: WARMUP_S } = OPTIONS;

const CRITICAL_SHARE = 0.5;
const PATHS = { critical: "/critical", sheddable: "/batch" };
const route = (cls, criticality) => aggregateRoute(PATHS[cls], criticality ? { criticality } : {});

const CONFIGS = [
  edgeshed("criticality", {
    note: `gateway, routes ${PATHS.critical} "criticality": "critical" and ${PATHS.sheddable} "sheddable"; ${LIMITS_NOTE}, default reserve`,
    limits: LIMITS,
    routes: [route("critical", "critical"), route("sheddable", "sheddable")],
  }),
  edgeshed("criticality-header", {
    note: `gateway, both routes "critical"; the sheddable clients send edgeshed-criticality: sheddable; limits as above`,
    limits: LIMITS,
    routes: [route("critical", "critical"), route("sheddable", "critical")],
    headers: { sheddable: { "edgeshed-criticality": "sheddable" } },
  }),
  edgeshed("no-criticality", { note: "gateway, the same routes and limits, no criticality (one class)", limits: LIMITS, routes: [route("critical"), route("sheddable")] }),
  pLimit(SLOTS, Object.values(PATHS)),
  envoyStyle(SLOTS, SLOTS, Object.values(PATHS)),
];
const chosen = choose(CONFIGS, OPTIONS.only);

/** The two streams at sheddable `level`×, with `config`'s own headers per class. */
const streams = (config, level) =>
  Object.entries({ critical: CRITICAL_SHARE, sheddable: level }).map(([cls, share]) => ({
    name: cls,
    class: cls,
    rate: share * CAPACITY,
    path: PATHS[cls],
    headers: config.headers[cls] ?? {},
  }));

const origins = await startOrigins({ names: ["a", "b"], concurrency: SLOTS, latencyMs: LATENCY_MS });
const started = Date.now();
const unloaded = await unloadedLatency(choose(CONFIGS, ["no-criticality"])[0], origins, PATHS.critical);
console.log(
  `origins a, b: ${SLOTS} slots × ${LATENCY_MS} ms → capacity ${CAPACITY} req/s; critical ${CRITICAL_SHARE}×, sheddable ${LEVELS.join(", ")}×; ` +
    `${LEVEL_S} s per level; unloaded p50 ${unloaded.p50.toFixed(1)} ms`,
);

const { rows, skipped } = await runAll(chosen, LEVELS, (config) => {
  const warm = async (url, fresh) => {
    for (const path of Object.values(PATHS)) await sequentialLatency(url, path, { n: 10, skip: 10 });
    await mixedLoad(url, streams(config, fresh ? 1 : Math.max(...LEVELS)), fresh ? 1 : WARMUP_S, { seed: 99 });
  };
  return {
    origins,
    warm,
    load: (w, level) => mixedLoad(w.url, streams(config, level), LEVEL_S, { seed: 1000 * level }),
    row: (level, load, extras) => {
      const classes = { critical: classFigures(load, "critical"), sheddable: classFigures(load, "sheddable") };
      return { config: config.name, level, classes, outsideContract: outsideContract(classes, config.contract), ...extras };
    },
    log: (r) => {
      const c = r.classes.critical;
      const s = r.classes.sheddable;
      console.log(
        `${r.config.padEnd(20)} sheddable ${String(r.level).padStart(2)}× | critical goodput ${c.goodput.toFixed(3)} p99 ${c.p99?.toFixed(1)} ms ${JSON.stringify(c.reasons)}` +
          ` | sheddable ${(s.okRps / CAPACITY).toFixed(2)}× p99 ${s.p99?.toFixed(1)} ${JSON.stringify(s.reasons)} | origin a ${r.origin.meanActive.toFixed(1)}/${r.origin.peakActive}` +
          ` | CPU ${r.cpu.isolate.toFixed(2)}${r.outsideContract ? ` | OUTSIDE ${r.outsideContract}` : ""}`,
      );
    },
  };
});

const meta = {
  criticalShare: CRITICAL_SHARE,
  paths: PATHS,
  unloaded,
};
report({ bench: "criticality-flood", meta, rows, skipped }, { started, options: OPTIONS, configs: chosen });
origins.close();
