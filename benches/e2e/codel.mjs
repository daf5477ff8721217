// Issue 23's bursty arrivals, end to end on workerd: queueDiscipline "codel"
// against "fifo" with the same queue, each also with maxQueueWait "auto"
// (issue 31), beside p-limit (workers/plimit.mjs: 4 per origin, an unbounded
// queue, no shedding). Goal: goodput ≥ 0.9 and admitted p99
// ≤ 2× unloaded at 1×, 3× and 10×, and with the capacity halved.
//
//   node benches/e2e/codel.mjs                     # both, 1×, 3×, 10×, each also halved (~4 min)
//   node benches/e2e/codel.mjs --quick             # 2 s per level, 1× and 10×, halved at 3× only
//   node benches/e2e/codel.mjs --levels 3,10 --halve 10 --max-queue 16 --queue-timeout 100
//   node benches/e2e/codel.mjs --json out.json --md out.md
//
// Origins a and b (benches/e2e/origin.mjs): 4 requests at once, 50 ms each,
// so 80 req/s through the fan-out. Load: GET /aggregate from autocannon in
// bursts 10 times a second (lib/arrivals.mjs bursty), at each level's
// multiple of the capacity. A halved run offers the same rate while the
// origins drop to 2 slots HALVE_PRE_S in; it is measured from 5 s after the
// drop against the halved capacity. Both configurations: per origin
// maxInFlight 4, maxQueue MAX_QUEUE, queueTimeoutMs QUEUE_TIMEOUT_MS (the
// normal wait of "Fail at Scale"); codel adds queueDiscipline "codel"
// (codelTargetMs: its default, 5). fifo names no discipline (the default),
// so it runs on builds without the key; a build that rejects "codel" (500
// {"error":"config"}) skips it with the gateway's message. Goodput: 2xx/s ÷
// capacity (lib/measure.mjs summarize). Benches are not tests.
import { bursty } from "./lib/arrivals.mjs";
import { summarize, timeline } from "./lib/measure.mjs";
import { CAPACITY, LATENCY_MS, SLOTS, benchOptions, option, report, runAll, sequentialLatency, unloadedLatency } from "./lib/levels.mjs";
import { startOrigins } from "./lib/origins.mjs";
import { choose, edgeshed, pLimit } from "./lib/peers.mjs";

const args = process.argv.slice(2);
const OPTIONS = benchOptions(args, { levels: "1,3,10", quickLevels: "1,10" });
const { quick: QUICK, levelS: LEVEL_S, levels: LEVELS, warmupS: WARMUP_S } = OPTIONS;
const HALVE_LEVELS = option(args, "--halve", QUICK ? "3" : "1,3,10").split(",").filter(Boolean).map(Number);
const HALVE_PRE_S = QUICK ? 1 : 2;
const HALVE_POST_S = QUICK ? 6 : 7;

const MAX_QUEUE = Number(option(args, "--max-queue", 2 * SLOTS));
const QUEUE_TIMEOUT_MS = Number(option(args, "--queue-timeout", 100));
const LIMITS = { maxInFlight: SLOTS, maxQueue: MAX_QUEUE, queueTimeoutMs: QUEUE_TIMEOUT_MS };
const queue = `per origin maxInFlight ${SLOTS}, maxQueue ${MAX_QUEUE}, queueTimeoutMs ${QUEUE_TIMEOUT_MS}`;

const CONFIGS = [
  edgeshed("fifo", { note: `gateway, ${queue}, queueDiscipline fifo (the default, not named)`, limits: LIMITS }),
  edgeshed("codel", { note: `gateway, ${queue}, queueDiscipline "codel" (codelTargetMs default)`, limits: { ...LIMITS, queueDiscipline: "codel" } }),
  edgeshed("auto", { note: `gateway, ${queue}, maxQueueWait "auto" (fifo)`, limits: { ...LIMITS, maxQueueWait: "auto" } }),
  edgeshed("codel+auto", {
    note: `gateway, ${queue}, queueDiscipline "codel" and maxQueueWait "auto" (the configuration docs/gateway.md recommends for bursty traffic)`,
    limits: { ...LIMITS, queueDiscipline: "codel", maxQueueWait: "auto" },
  }),
  // An adaptive origin limit instead of a fixed 4 (issue 31): the halved runs
  // show how fast it follows the capacity drop on workerd.
  edgeshed("adaptive", {
    note: `gateway, per origin adaptive gradient2 (its defaults), maxQueue ${MAX_QUEUE}, queueTimeoutMs ${QUEUE_TIMEOUT_MS}`,
    limits: { adaptive: { algorithm: "gradient2" }, maxQueue: MAX_QUEUE, queueTimeoutMs: QUEUE_TIMEOUT_MS },
  }),
  // The peer a user switches from: no shedding, an unbounded FIFO queue.
  pLimit(SLOTS, ["/aggregate"]),
];
const chosen = choose(CONFIGS, OPTIONS.only);
const runs = [...LEVELS.map((level) => ({ level, halve: false })), ...HALVE_LEVELS.map((level) => ({ level, halve: true }))];

const origins = await startOrigins({ names: ["a", "b"], concurrency: SLOTS, latencyMs: LATENCY_MS });
const started = Date.now();
const unloaded = await unloadedLatency(CONFIGS[0], origins, "/aggregate");
console.log(
  `origins a, b: ${SLOTS} slots × ${LATENCY_MS} ms → capacity ${CAPACITY} req/s; bursty ${LEVELS.join(", ")}×, halved at ${HALVE_LEVELS.join(", ")}×; ` +
    `${LEVEL_S} s per level; unloaded p50 ${unloaded.p50.toFixed(1)} ms`,
);

/** One bursty run on `w`; a halved one drops the origins to half their slots HALVE_PRE_S in. */
async function load(w, { level, halve }) {
  let halving;
  const offered = await bursty(w.url, Math.round(level * CAPACITY), halve ? HALVE_PRE_S + HALVE_POST_S : LEVEL_S, {
    onStart: () => {
      if (halve) halving = setTimeout(() => origins.setCapacity(SLOTS / 2), HALVE_PRE_S * 1000);
    },
  });
  clearTimeout(halving);
  if (halve) await origins.setCapacity(SLOTS);
  return offered;
}

/** The row of one run: the figures of the whole window, or of the halved capacity from 5 s after the drop. */
function row(config, { level, halve }, offered, extras) {
  const base = { config: config.name, level, ...extras };
  if (!halve) return { ...base, kind: "level", ...summarize(offered, { to: offered.windowMs, capacity: CAPACITY, contract: config.contract }) };
  const drop = HALVE_PRE_S * 1000;
  const from = drop + 5000;
  const bins = timeline(offered, { from: drop, to: offered.windowMs, binMs: 500, capacity: CAPACITY / 2 });
  const reached = bins.findIndex((g) => g >= 0.9);
  const after = { ...offered, responses: offered.responses.filter((r) => r.at >= from) };
  return {
    ...base,
    kind: "halving",
    ...summarize(after, { from, to: offered.windowMs, capacity: CAPACITY / 2, contract: config.contract }),
    timeline: bins,
    reachedMs: reached < 0 ? null : (reached + 1) * 500,
  };
}

const { rows, skipped } = await runAll(chosen, runs, (config) => ({
  origins,
  warm: async (url) => {
    await sequentialLatency(url, "/aggregate", { n: 20, skip: 20 });
    await bursty(url, 10 * CAPACITY, WARMUP_S);
  },
  load,
  row: (run, offered, extras) => row(config, run, offered, extras),
  log: (r) => {
    const what = r.kind === "halving" ? `halved@${r.level}×` : `${r.level}×`;
    console.log(
      `${r.config.padEnd(6)} ${what.padEnd(10)} goodput ${r.goodput.toFixed(2)} | 2xx p50 ${r.admitted.p50?.toFixed(1)} p99 ${r.admitted.p99?.toFixed(1)}` +
        ` | 503 p99 ${r.shed.p99?.toFixed(1)} | origin a ${r.origin.meanActive.toFixed(1)}/${r.origin.peakActive} queue ${r.origin.meanQueued.toFixed(1)}` +
        ` | ${JSON.stringify(r.statuses)} | CPU ${r.cpu.isolate.toFixed(2)}${r.outsideContract ? ` | OUTSIDE ${r.outsideContract}` : ""}`,
    );
  },
}));

const meta = {
  maxQueue: MAX_QUEUE,
  queueTimeoutMs: QUEUE_TIMEOUT_MS,
  halve: { levels: HALVE_LEVELS, preS: HALVE_PRE_S, postS: HALVE_POST_S },
  unloaded,
};
report({ bench: "codel-bursty", meta, rows, skipped }, { started, options: OPTIONS, configs: chosen });
origins.close();
