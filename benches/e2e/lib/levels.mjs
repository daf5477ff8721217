// One configuration through a list of measured runs on workerd, shared by
// the benches of issues 23 and 24 (criticality.mjs, codel.mjs, tenants.mjs):
// start the worker, skip it when the build rejects its configuration, warm it
// up, then per run: origins idle and reset, CPU sampled, the load, the
// origins' concurrency and the gateway's own counters over the run.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { ROOT } from "../../support/workerd.mjs";
import { renderBench } from "./class-reports.mjs";
import { cpuSampler, originFigures, percentile } from "./measure.mjs";

/**
 * The configuration error of a started worker, or null: the gateway answers
 * every request with 500 {"error":"config","message":"<which key>"} when it
 * rejects its binding (a key this build does not know yet, for instance).
 */
export async function configRejection(mf) {
  const response = await mf.dispatchFetch("http://bench.test/__edgeshed/stats");
  const text = await response.text();
  if (response.status !== 500) return null;
  try {
    const body = JSON.parse(text);
    return body.error === "config" ? body.message ?? "configuration error" : null;
  } catch {
    return null;
  }
}

/** Latency p50/p99 of `n` sequential GETs of `path` on `url`, the first `skip` left out (warm-up). */
export async function sequentialLatency(url, path, { n = 40, skip = 10, headers = {} } = {}) {
  const ms = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const response = await fetch(new URL(path, url), { headers });
    await response.text();
    if (i >= skip) ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return { p50: percentile(ms, 50), p99: percentile(ms, 99) };
}

/** The unloaded latency through `config` (started on `origins`) on `path`. */
export async function unloadedLatency(config, origins, path) {
  const w = await config.start(origins.url);
  try {
    return await sequentialLatency(w.url, path);
  } finally {
    await w.mf.dispose();
  }
}

/** `after` minus `before` on every numeric leaf (the gateway's counters over one run; gauges come out as changes). */
export function counterDelta(after, before) {
  if (typeof after === "number") return typeof before === "number" ? after - before : after;
  if (after === null || typeof after !== "object") return after;
  return Object.fromEntries(Object.entries(after).map(([k, v]) => [k, counterDelta(v, before?.[k])]));
}

/** The gateway's /__edgeshed/stats (edgeshed configurations only), or null. */
async function gatewayStats(w, config) {
  if (!config.stats) return null;
  try {
    return await (await w.mf.dispatchFetch("http://bench.test/__edgeshed/stats")).json();
  } catch {
    return null;
  }
}

/**
 * Runs `runs` on `config` ({ name, start(originUrl), fresh, stats }): one
 * warmed-up workerd for all runs, or a fresh one per run when `config.fresh`
 * (the baselines that queue without bound: a backlog would spill into the
 * next run). Hooks: `warm(url, fresh)` warms a new worker; `load(w, run)`
 * offers one run's load on w ({ url, mf, pid }) and resolves to it; `row(run, load, extras)` turns
 * it into a table row, with extras { origin (origin a's concurrency and
 * queue), cpu (lib/measure.mjs cpuSampler), gateway (the change of its
 * counters) }. Calls `log(row)` per run. Resolves to { rows, skipped } where
 * `skipped` is the build's configuration error (then no run was made).
 */
export async function runConfig(config, runs, { origins, warm, load, row, log = () => {} }) {
  const rows = [];
  let w = await config.start(origins.url);
  const rejected = await configRejection(w.mf);
  if (rejected) {
    await w.mf.dispose();
    return { rows, skipped: rejected };
  }
  try {
    await warm(w.url, Boolean(config.fresh));
    for (const [i, run] of runs.entries()) {
      if (config.fresh && i > 0) {
        await w.mf.dispose();
        w = await config.start(origins.url);
        await warm(w.url, true);
      }
      await origins.idle();
      await origins.reset();
      const before = await gatewayStats(w, config);
      const cpu = cpuSampler(w.pid);
      const offered = await load(w, run);
      const cpuShares = cpu.stop();
      const origin = originFigures(await origins.stats());
      const after = await gatewayStats(w, config);
      const r = row(run, offered, { origin, cpu: cpuShares, gateway: after && counterDelta(after, before) });
      rows.push(r);
      log(r);
    }
  } finally {
    await w.mf.dispose();
    await origins.idle();
  }
  return { rows, skipped: null };
}

/**
 * runConfig for each of `configs` with the same `runs` and the hooks
 * `hooksOf(config)`; a configuration the build rejects is said at once and
 * listed in `skipped` ([{ config, message }]). Resolves to { rows, skipped }.
 */
export async function runAll(configs, runs, hooksOf) {
  const rows = [];
  const skipped = [];
  for (const config of configs) {
    const result = await runConfig(config, runs, hooksOf(config));
    rows.push(...result.rows);
    if (result.skipped) {
      skipped.push({ config: config.name, message: result.skipped });
      console.log(`${config.name} SKIPPED: this build rejects its configuration: ${result.skipped}`);
    }
  }
  return { rows, skipped };
}

/**
 * Completes `data` ({ bench, meta, rows, skipped }): its meta gets the
 * origins (capacity, slots, latencyMs), the run's `options` (levels, levelS,
 * quick), the `configs` run (name, note), the machine and the minutes since
 * `started`. Prints its report (lib/class-reports.mjs) and writes it to the
 * options' --json / --md files.
 */
export function report(data, { started, options, configs }) {
  const { levels, levelS, quick, json, md } = options;
  data.meta = {
    capacity: CAPACITY,
    slots: SLOTS,
    latencyMs: LATENCY_MS,
    levels,
    levelS,
    quick,
    ...data.meta,
    configs: configs.map(({ name, note }) => ({ name, note })),
    machine: machineNote(),
    minutes: (Date.now() - started) / 60000,
  };
  const markdown = renderBench(data);
  console.log(`\n${markdown}\nran ${data.meta.minutes.toFixed(1)} min`);
  if (json) writeFileSync(json, JSON.stringify(data, null, 2));
  if (md) writeFileSync(md, markdown);
}

/** Where and when a run was made: the git commit, the machine's load (the benches are ratios within one run). */
function machineNote() {
  let git = "?";
  try {
    git = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
  } catch {
    // not a checkout
  }
  let uptime = "";
  try {
    uptime = execFileSync("uptime", { encoding: "utf8" }).trim();
  } catch {
    uptime = `load average ${loadavg().map((x) => x.toFixed(2)).join(", ")}`;
  }
  return { git, at: new Date().toISOString(), uptime };
}

/** The value after `name` in `args` (a `--name value` option), or `fallback`. */
export const option = (args, name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);

/** The origins of these benches: 4 requests at once, 50 ms each, so 80 req/s through the fan-out. */
export const SLOTS = 4;
export const LATENCY_MS = 50;
export const CAPACITY = (SLOTS * 1000) / LATENCY_MS;
/** The gateway's origin limit of the flood and the noisy tenant: the origins' slots and a queue as long, bounded by one call's time. */
export const LIMITS = { maxInFlight: SLOTS, maxQueue: SLOTS, queueTimeoutMs: LATENCY_MS };
export const LIMITS_NOTE = `per origin maxInFlight ${SLOTS}, maxQueue ${SLOTS}, queueTimeoutMs ${LATENCY_MS}`;

/**
 * The options every bench of this kind takes: --quick (2 s per level, the
 * levels `quickLevels`), --duration S (per level, default 4), --levels
 * (default `levels`), --only a,b, --json FILE, --md FILE; plus the warm-up.
 */
export function benchOptions(args, { levels, quickLevels }) {
  const quick = args.includes("--quick");
  return {
    quick,
    levelS: Number(option(args, "--duration", quick ? 2 : 4)),
    levels: option(args, "--levels", quick ? quickLevels : levels).split(",").map(Number),
    warmupS: quick ? 1 : 1.5,
    only: option(args, "--only", null)?.split(","),
    json: option(args, "--json", null),
    md: option(args, "--md", null),
  };
}
