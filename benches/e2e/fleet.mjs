// Issue 21's fleet run: three gateway isolates (workers of one Miniflare,
// the production entry worker/index.mjs) share origins a and b, as a
// deployment does. Per-isolate limits against the fleet budget:
//
//   fixed            maxInFlight 4 in each isolate (hand-tuned to one isolate)
//   adaptive         gradient2 in each isolate (defaults)
//   fixed+budget     budget.maxInFlight 4 for the fleet (tuned to the truth)
//   adaptive+budget  budget.adaptive gradient2 (initial 8): the object learns
//
//   node benches/e2e/fleet.mjs                      # 4 s per level, ~3 min
//   node benches/e2e/fleet.mjs --quick              # 2 s per level
//   node benches/e2e/fleet.mjs --only fixed,adaptive+budget --levels 3,10 --json out.json
//
// Origins a and b (benches/e2e/origin.mjs, a child process) serve 4 requests
// at once in 50 ms each and queue the rest: the fan-out's capacity is 80
// req/s, whoever sends it. Open-loop Poisson arrivals (lib/arrivals.mjs
// `smooth`, one process per isolate at a third of the rate each) at 1x, 3x
// and 10x that capacity, LEVEL_S each, after a warm-up; a fresh Miniflare
// (and object) per configuration. Figures per run: goodput (2xx/s ÷
// capacity), admitted (2xx) p50/p99, 503 p99, origin a's calls (in service
// plus queued: time-weighted mean and peak) against its 4 slots, and the
// limits at the end (each isolate's, and the fleet's from /__edgeshed/budget).
import { writeFileSync } from "node:fs";
import { startFleet } from "../support/fleet.mjs";
import { ARRIVALS } from "./lib/arrivals.mjs";
import { percentile } from "./lib/measure.mjs";
import { startOrigins } from "./lib/origins.mjs";

const args = process.argv.slice(2);
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const QUICK = args.includes("--quick");
const LEVEL_S = Number(opt("--duration", QUICK ? 2 : 4));
const LEVELS = opt("--levels", "1,3,10").split(",").map(Number);
const ONLY = opt("--only", null)?.split(",");
const JSON_OUT = opt("--json", null);
const GATEWAYS = 3;
const SLOTS = 4;
const LATENCY_MS = 50;
const CAPACITY = (SLOTS * 1000) / LATENCY_MS;
const TTL_MS = 2_000;

const CONFIGS = [
  { name: "fixed", origin: { maxInFlight: SLOTS, maxQueue: 0 } },
  { name: "adaptive", origin: { adaptive: { algorithm: "gradient2" }, maxQueue: 0 } },
  { name: "fixed+budget", origin: { maxInFlight: SLOTS, maxQueue: 0 }, budget: { maxInFlight: SLOTS } },
  {
    name: "adaptive+budget",
    origin: { maxInFlight: 16, maxQueue: 0 },
    budget: { adaptive: { algorithm: "gradient2", initialLimit: 8, minLimit: 1, maxLimit: 64 } },
  },
].filter((c) => !ONLY || ONLY.includes(c.name));

/** The EDGESHED binding of every isolate for `config`. */
function binding(originUrl, config) {
  const origin = (name) => ({
    url: originUrl(name),
    timeoutMs: 1_000,
    ...config.origin,
    ...(config.budget ? { budget: { leaseTtlMs: TTL_MS, ...config.budget } } : {}),
  });
  return {
    retryAfterSeconds: 1,
    statsPublic: true,
    global: { maxInFlight: 1000 },
    origins: { a: origin("a"), b: origin("b") },
    routes: [{ path: "/aggregate", fanout: [{ origin: "a", path: "/a" }, { origin: "b", path: "/b" }] }],
  };
}

const getJson = async (url) => (await fetch(url)).json();

/** The budget counters of origin a summed over the isolates (calls, watches, failures, shed). */
async function budgetCounters(urls) {
  const total = { calls: 0, watches: 0, failures: 0, shed: 0 };
  const names = { calls: "calls", watches: "watches", failures: "lease_failures", shed: "shed" };
  for (const u of urls) {
    const text = await (await fetch(new URL("/__edgeshed/metrics", u))).text();
    for (const [key, name] of Object.entries(names)) {
      total[key] += Number(text.match(new RegExp(`^edgeshed_budget_${name}_total\\{origin="a"\\} (\\d+)$`, "m"))?.[1] ?? 0);
    }
  }
  return total;
}

/** Each isolate's limits of origin a, and the fleet's (budgeted configurations). */
async function limits(urls, config) {
  const local = await Promise.all(urls.map(async (u) => (await getJson(new URL("/__edgeshed/stats", u))).origins.a.limit));
  const fleet = config.budget ? (await getJson(new URL("/__edgeshed/budget", urls[0]))).origins.a.limit : null;
  return { local, fleet };
}

/** One level: a third of `rate` at each isolate, merged. */
async function load(urls, rate, seconds, seed) {
  const parts = await Promise.all(urls.map((u, i) => ARRIVALS.smooth(u, rate / urls.length, seconds, { seed: seed + i })));
  const merged = { sent: 0, errors: 0, timeouts: 0, unfinished: 0, responses: [], windowMs: seconds * 1000 };
  for (const p of parts) {
    merged.sent += p.sent;
    merged.errors += p.errors;
    merged.timeouts += p.timeouts;
    merged.unfinished += p.unfinished;
    merged.responses.push(...p.responses);
  }
  return merged;
}

function figures(result, seconds) {
  const inWindow = result.responses.filter((r) => r.at <= seconds * 1000);
  const ok = inWindow.filter((r) => r.status === 200).length;
  const sorted = (status) => result.responses.filter((r) => r.status === status).map((r) => r.ms).sort((a, b) => a - b);
  const admitted = sorted(200);
  const shed = sorted(503);
  const statuses = {};
  for (const r of result.responses) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  return {
    goodput: ok / seconds / CAPACITY,
    admitted: { p50: percentile(admitted, 50), p99: percentile(admitted, 99) },
    shedP99: percentile(shed, 99),
    statuses,
    lost: result.errors + result.timeouts + result.unfinished,
  };
}

const origins = await startOrigins({ names: ["a", "b"], concurrency: SLOTS, latencyMs: LATENCY_MS });
const rows = [];
const started = Date.now();
console.log(`${GATEWAYS} isolates; origins a, b: ${SLOTS} slots x ${LATENCY_MS} ms -> capacity ${CAPACITY} req/s; ${LEVEL_S} s per level`);
for (const config of CONFIGS) {
  const { mf, urls } = await startFleet(binding(origins.url, config), GATEWAYS);
  try {
    // warm-up: every isolate answers, then 1 s at 3x
    for (const u of urls) for (let i = 0; i < 10; i++) await (await fetch(new URL("/aggregate", u))).text();
    await load(urls, 3 * CAPACITY, 1, 99);
    await origins.idle();
    for (const level of LEVELS) {
      await origins.reset();
      const before = config.budget ? await budgetCounters(urls) : null;
      const result = await load(urls, level * CAPACITY, LEVEL_S, 1000 * level);
      const a = (await origins.stats()).a;
      const after = config.budget ? await budgetCounters(urls) : null;
      const object = after && Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - before[k]]));
      const row = {
        config: config.name,
        level,
        ...figures(result, LEVEL_S),
        origin: { meanCalls: a.meanActive + a.meanQueued, peakCalls: a.peakActive + a.peakQueued, meanQueued: a.meanQueued },
        limits: await limits(urls, config).catch(() => null),
        object,
      };
      rows.push(row);
      console.log(line(row));
      await origins.idle();
    }
  } finally {
    await mf.dispose();
  }
}

function line(r) {
  const f = (x) => (Number.isFinite(x) ? x.toFixed(1) : "-");
  const lim = r.limits ? ` | limits ${r.limits.local.join("/")}${r.limits.fleet === null ? "" : ` fleet ${r.limits.fleet}`}` : "";
  return (
    `${r.config.padEnd(16)} ${`${r.level}x`.padEnd(4)} goodput ${r.goodput.toFixed(2)} | 2xx p50 ${f(r.admitted.p50)} p99 ${f(r.admitted.p99)}` +
    ` | 503 p99 ${f(r.shedP99)} | origin a calls ${f(r.origin.meanCalls)} (peak ${r.origin.peakCalls}) of ${SLOTS} slots${lim} | ${JSON.stringify(r.statuses)}` +
    (r.object ? ` | object calls ${r.object.calls} watches ${r.object.watches} failed ${r.object.failures} budget 503s ${r.object.shed}` : "") +
    (r.lost ? ` | lost ${r.lost}` : "")
  );
}

const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : "-");
const table = [
  `| configuration | load | goodput | admitted p50 / p99 ms | 503 p99 ms | origin a calls, mean (peak) / ${SLOTS} slots | limits at the end |`,
  "|---|---|---|---|---|---|---|",
  ...rows.map(
    (r) =>
      `| ${r.config} | ${r.level}x | ${r.goodput.toFixed(2)} | ${f1(r.admitted.p50)} / ${f1(r.admitted.p99)} | ${f1(r.shedP99)} | ` +
      `${f1(r.origin.meanCalls)} (${r.origin.peakCalls}) | ${r.limits ? `${r.limits.local.join("/")}${r.limits.fleet === null ? "" : `, fleet ${r.limits.fleet}`}` : "-"} |`,
  ),
].join("\n");
const minutes = (Date.now() - started) / 60000;
console.log(`\n${table}\nran ${minutes.toFixed(1)} min`);
if (JSON_OUT) {
  const meta = { gateways: GATEWAYS, slots: SLOTS, latencyMs: LATENCY_MS, capacity: CAPACITY, levelS: LEVEL_S, leaseTtlMs: TTL_MS, minutes };
  writeFileSync(JSON_OUT, JSON.stringify({ meta, rows }, null, 2));
}
origins.close();
