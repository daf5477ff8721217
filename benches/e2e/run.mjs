// Issue 13's figure: goodput at overload, end to end on workerd.
//
//   node benches/e2e/run.mjs                   # every configuration, ~9-10 min
//   node benches/e2e/run.mjs --quick           # 2 s per level, ~4-5 min
//   node benches/e2e/run.mjs --only gradient2,fixed --arrivals smooth --levels 10
//   node benches/e2e/run.mjs --json out.json --svg out.svg --md out.md
//   node benches/e2e/run.mjs --hog 2 ...       # 2 busy-looping processes beside it (other tenants)
//
// Origins a and b (benches/e2e/origin.mjs, child process) serve 4 requests
// at once in 50 ms each and queue the rest: the fan-out's capacity is
// 80 req/s. Each configuration (lib/configs.mjs) runs in a fresh workerd per
// arrival process (lib/arrivals.mjs: smooth Poisson, bursty autocannon):
// warm-up (20 sequential requests, WARMUP_S of smooth arrivals at 10×),
// then 1×, 3× and 10× the capacity for LEVEL_S each, then the halving phase
// at HALVE_LEVEL× (the origins' slots drop from 4 to 2 after HALVE_PRE_S;
// measured for HALVE_POST_S against the new capacity), the origins drained
// and reset between runs. The baselines (p-limit, naive) queue without
// bound, so they get a fresh workerd per run instead (warmed up at 1× for
// 1 s): a run's backlog would otherwise spill into the next. Figures per
// run: goodput (2xx/s ÷ capacity), admitted (2xx) p50/p99, 503 p99, origin
// a's mean/peak concurrency and queue, workerd's peak RSS, and edgeshed's
// origin limits at the end. The floor worker (503 at once) runs at 10×
// only: the 503 p99 goal is measured against it. The table, the goals and
// the plot (lib/plot.mjs: goodput vs admitted p99) are written at the end.
//
// The bench of issue 6 (RSS growth and shed latency per level, --soak) is
// benches/e2e/rss.mjs.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../support/workerd.mjs";
import { ARRIVALS } from "./lib/arrivals.mjs";
import { configurations } from "./lib/configs.mjs";
import { cpuSampler, originFigures, percentile, rssSampler, summarize, timeline } from "./lib/measure.mjs";
import { startOrigins } from "./lib/origins.mjs";
import { plotSvg } from "./lib/plot.mjs";
import { goalsMarkdown, tableMarkdown } from "./lib/report.mjs";

const args = process.argv.slice(2);
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const QUICK = args.includes("--quick");
const LEVEL_S = Number(opt("--duration", QUICK ? 2 : 4));
const LEVELS = opt("--levels", "1,3,10").split(",").map(Number);
const ARRIVAL_NAMES = opt("--arrivals", "smooth,bursty").split(",");
const ONLY = opt("--only", null)?.split(",");
const HALVE_PRE_S = QUICK ? 1 : 2;
const HALVE_POST_S = QUICK ? 6 : 7;
const HALVE_LEVEL = 3;
const WARMUP_S = QUICK ? 1 : 1.5;
const JSON_OUT = opt("--json", null);
const SVG_OUT = opt("--svg", QUICK ? null : join(ROOT, "BENCHMARKS-adaptive.svg"));
const MD_OUT = opt("--md", null);

// Other tenants of the machine, made on purpose: each a process spinning
// on the CPU for the whole run (the 10x stall finding of issue 13).
const HOGS = Array.from({ length: Number(opt("--hog", 0)) }, () =>
  spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }),
);

const SLOTS = 4;
const LATENCY_MS = 50;
const CAPACITY = (SLOTS * 1000) / LATENCY_MS;

const origins = await startOrigins({ names: ["a", "b"], concurrency: SLOTS, latencyMs: LATENCY_MS });
const all = configurations(SLOTS, LATENCY_MS);
const chosen = all.filter((c) => c.floor || !ONLY || ONLY.some((o) => c.name === o));

/** The edgeshed origin limits (a/b) from /__edgeshed/stats, if it is edgeshed. */
async function limits(mf, config) {
  if (!config.limits) return null;
  const r = await mf.dispatchFetch("http://bench.test/__edgeshed/stats");
  const stats = await r.json();
  return { a: stats.origins.a.limit, b: stats.origins.b.limit };
}

/** Median latency of 30 sequential requests to the edgeshed fixed worker. */
async function unloadedLatency() {
  const fixed = all.find((c) => c.name === "fixed");
  const w = await fixed.start(origins.url);
  try {
    const ms = [];
    for (let i = 0; i < 40; i++) {
      const t = performance.now();
      const r = await fetch(new URL("/aggregate", w.url));
      await r.text();
      if (i >= 10) ms.push(performance.now() - t);
    }
    ms.sort((a, b) => a - b);
    return { p50: percentile(ms, 50), p99: percentile(ms, 99) };
  } finally {
    await w.mf.dispose();
  }
}

/** One measured load at `k`× on `w`; `halve`: the capacity halves mid-run. */
async function measure(config, w, arrival, k, { halve = false } = {}) {
  await origins.reset();
  const rss = rssSampler(w.pid);
  const cpu = cpuSampler(w.pid);
  const seconds = halve ? HALVE_PRE_S + HALVE_POST_S : LEVEL_S;
  let halving;
  const load = await ARRIVALS[arrival](w.url, Math.round(k * CAPACITY), seconds, {
    seed: 1000 * k + (halve ? 7 : 0),
    onStart: () => {
      if (halve) halving = setTimeout(() => origins.setCapacity(SLOTS / 2), HALVE_PRE_S * 1000);
    },
  });
  clearTimeout(halving);
  const rssPeak = rss.stop();
  const cpuShares = cpu.stop();
  const originStats = await origins.stats();
  const limitsAtEnd = await limits(w.mf, config).catch(() => null);
  if (halve) await origins.setCapacity(SLOTS);
  const end = load.windowMs;
  const base = { config: config.name, arrival, level: k, rssKiB: rssPeak, cpu: cpuShares, limits: limitsAtEnd, origin: originFigures(originStats) };
  if (!halve) {
    return { ...base, kind: "level", ...summarize(load, { to: end, capacity: CAPACITY, contract: config.contract }) };
  }
  const at = HALVE_PRE_S * 1000;
  const after = { ...load, responses: load.responses.filter((r) => r.at >= at + 5000) };
  const bins = timeline(load, { from: at, to: at + HALVE_POST_S * 1000, binMs: 500, capacity: CAPACITY / 2 });
  const reached = bins.findIndex((g) => g >= 0.9);
  return {
    ...base,
    kind: "halving",
    ...summarize(after, { from: at + 5000, to: end, capacity: CAPACITY / 2, contract: config.contract }),
    timeline: bins,
    reachedMs: reached < 0 ? null : (reached + 1) * 500,
  };
}

const rows = [];
const started = Date.now();
const unloaded = await unloadedLatency();
console.log(
  `origins a, b: ${SLOTS} slots × ${LATENCY_MS} ms → capacity ${CAPACITY} req/s; unloaded latency through the gateway p50 ${unloaded.p50.toFixed(1)} ms; ` +
    `${LEVEL_S} s per level, halving at ${HALVE_LEVEL}× after ${HALVE_PRE_S} s, measured ${HALVE_POST_S} s`,
);
/** A fresh workerd for `config`, warmed up with `warmRate` req/s of smooth arrivals. */
async function warmWorker(config, warmRate, seconds = WARMUP_S) {
  const w = await config.start(origins.url);
  // Warm-up: V8 tiers the wasm and the JS up and sizes its heap under
  // load; without it the first run at 10× is seconds behind.
  for (let i = 0; i < 20; i++) await (await fetch(new URL("/aggregate", w.url))).text();
  await ARRIVALS.smooth(w.url, warmRate, seconds, { seed: 99 });
  await origins.idle();
  return w;
}

/** Runs `runs` ([level, halve]) on `config`: one warmed workerd for all, or one each (`fresh`). */
async function session(config, arrival, runs, fresh) {
  let w = fresh ? null : await warmWorker(config, 10 * CAPACITY);
  try {
    for (const [k, halve] of runs) {
      // The baselines queue without bound: a fresh workerd per run, so one
      // run's backlog does not spill into the next.
      if (fresh) w = await warmWorker(config, CAPACITY, 1);
      const row = await measure(config, w, arrival, k, { halve });
      rows.push(row);
      console.log(line(row));
      if (fresh) await w.mf.dispose();
      await origins.idle();
    }
  } finally {
    if (!fresh) await w.mf.dispose();
  }
}

for (const config of chosen) {
  for (const arrival of ARRIVAL_NAMES) {
    const runs = config.floor ? [[10, false]] : [...LEVELS.map((k) => [k, false]), [HALVE_LEVEL, true]];
    await session(config, arrival, runs, Boolean(config.fresh));
  }
}

function line(r) {
  const f = (x) => (Number.isFinite(x) ? x.toFixed(1) : "–");
  const what = r.kind === "halving" ? `halved@${r.level}×` : `${r.level}×`;
  const lim = r.limits ? ` limit a/b ${r.limits.a}/${r.limits.b}` : "";
  const reach = r.kind === "halving" ? ` (≥0.9 after ${r.reachedMs ?? "never"} ms)` : "";
  return (
    `${r.config.padEnd(15)} ${r.arrival.padEnd(6)} ${what.padEnd(10)} goodput ${r.goodput.toFixed(2)}${reach}` +
    ` | 2xx p50 ${f(r.admitted.p50)} p99 ${f(r.admitted.p99)} | 503 p99 ${f(r.shed.p99)}` +
    ` | origin a active ${f(r.origin.meanActive)}/${r.origin.peakActive} queue ${f(r.origin.meanQueued)}/${r.origin.peakQueued}` +
    ` | RSS ${(r.rssKiB / 1024).toFixed(1)} MiB${lim} | ${JSON.stringify(r.statuses)}` +
    ` | CPU workerd ${r.cpu.workerd.toFixed(2)} isolate ${r.cpu.isolate.toFixed(2)} (peak ${r.cpu.isolatePeak.toFixed(2)}) generator ${r.cpu.generator.toFixed(2)}` +
    (r.outsideContract ? ` OUTSIDE ${r.outsideContract} (err ${r.errors}, t/o ${r.timeouts}, unfinished ${r.unfinished})` : "")
  );
}

const meta = { capacity: CAPACITY, slots: SLOTS, latencyMs: LATENCY_MS, unloaded, levelS: LEVEL_S, halve: { level: HALVE_LEVEL, preS: HALVE_PRE_S, postS: HALVE_POST_S }, quick: QUICK, minutes: (Date.now() - started) / 60000 };
const markdown = `${tableMarkdown(rows, meta)}\n${goalsMarkdown(rows, meta)}`;
console.log(`\n${markdown}\nran ${meta.minutes.toFixed(1)} min`);
if (JSON_OUT) writeFileSync(JSON_OUT, JSON.stringify({ meta, rows }, null, 2));
if (MD_OUT) writeFileSync(MD_OUT, markdown);
if (SVG_OUT) {
  writeFileSync(SVG_OUT, plotSvg(rows, meta));
  console.log(`plot: ${SVG_OUT}`);
}
origins.close();
for (const hog of HOGS) hog.kill();
