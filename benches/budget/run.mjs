// The fleet budget's cost and effect (issue 14): 3 gateway isolates (the
// production entry, worker/index.mjs) share one EdgeshedBudget object in
// front of an origin whose capacity is the budget (maxInFlight calls, each
// `LATENCY_MS`). Open-loop arrivals at 1x and 10x that capacity, with the
// budget and without it (the same fleet limit split statically: each
// isolate's own maxInFlight = budget / 3).
//
//   node benches/budget/run.mjs            # 10 s per run, origin latency 500 ms
//   SECONDS=20 LATENCY_MS=200 node benches/budget/run.mjs
//   node benches/budget/run.mjs --json out.json   # also the rows and settings as JSON
//
// Prints: object calls per admitted request, admitted p50/p99 latency (and
// the difference to the run without a budget), the origin's peak
// concurrency against the budget, goodput (origin busy time / (budget x
// duration)). Needs dist/worker (./scripts/build-worker.sh).
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { startFleet as startGateways } from "../support/fleet.mjs";

const BUDGET = 12;
const GATEWAYS = 3;
const LATENCY_MS = Number(process.env.LATENCY_MS ?? 500);
const SECONDS = Number(process.env.SECONDS ?? 10);
const CAPACITY_RPS = (BUDGET * 1000) / LATENCY_MS;
const JSON_OUT = process.argv.includes("--json") ? process.argv[process.argv.indexOf("--json") + 1] : null;

function startOrigin() {
  const o = { active: 0, peak: 0, busyMs: 0, served: 0 };
  const server = createServer((req, res) => {
    req.resume();
    o.active++;
    o.peak = Math.max(o.peak, o.active);
    const start = performance.now();
    const timer = setTimeout(() => res.end('{"ok":true}'), LATENCY_MS);
    res.on("close", () => {
      clearTimeout(timer);
      o.active--;
      o.served++;
      o.busyMs += performance.now() - start;
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ o, server, url: `http://127.0.0.1:${server.address().port}` })));
}

async function startFleet(originUrl, budgeted) {
  const users = budgeted
    ? { url: originUrl, maxInFlight: BUDGET, maxQueue: 0, timeoutMs: 2000, budget: { maxInFlight: BUDGET, leaseTtlMs: 5000 } }
    : { url: originUrl, maxInFlight: BUDGET / GATEWAYS, maxQueue: 0, timeoutMs: 2000 };
  const config = {
    statsPublic: true,
    global: { maxInFlight: 1000 },
    origins: { users },
    routes: [{ path: "/aggregate", fanout: [{ origin: "users", path: "/u" }] }],
  };
  const { mf, urls } = await startGateways(config, GATEWAYS);
  const fetchers = urls.map((base) => ({ fetch: (url) => fetch(new URL(new URL(url).pathname, base)) }));
  return { mf, fetchers };
}

const metric = (text, name) => Number(text.match(new RegExp(`^${name}\\{origin="users"\\} (\\d+)$`, "m"))?.[1] ?? 0);

async function objectCalls(fetchers) {
  let calls = 0;
  for (const f of fetchers) {
    const text = await (await f.fetch("http://edgeshed.test/__edgeshed/metrics")).text();
    calls += metric(text, "edgeshed_budget_calls_total");
  }
  return calls;
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

async function run(load, budgeted) {
  const origin = await startOrigin();
  const { mf, fetchers } = await startFleet(origin.url, budgeted);
  // Warm up: every isolate answers once.
  for (const f of fetchers) await (await f.fetch("http://edgeshed.test/aggregate")).text();
  const calls0 = await objectCalls(fetchers);
  Object.assign(origin.o, { peak: origin.o.active, busyMs: 0, served: 0 });
  const rate = CAPACITY_RPS * load;
  const latencies = [];
  const statuses = {};
  const pending = [];
  const start = performance.now();
  let sent = 0;
  await new Promise((resolve) => {
    const tick = setInterval(() => {
      const elapsed = performance.now() - start;
      if (elapsed >= SECONDS * 1000) {
        clearInterval(tick);
        resolve();
        return;
      }
      const due = Math.floor((elapsed / 1000) * rate);
      for (; sent < due; sent++) {
        const f = fetchers[sent % GATEWAYS];
        const t0 = performance.now();
        pending.push(
          f.fetch("http://edgeshed.test/aggregate").then(async (r) => {
            await r.arrayBuffer();
            statuses[r.status] = (statuses[r.status] ?? 0) + 1;
            if (r.status === 200) latencies.push(performance.now() - t0);
          }, () => {
            statuses.error = (statuses.error ?? 0) + 1;
          }),
        );
      }
    }, 5);
  });
  const window = performance.now() - start;
  await Promise.all(pending);
  const calls = (await objectCalls(fetchers)) - calls0;
  await mf.dispose();
  origin.server.close();
  latencies.sort((a, b) => a - b);
  const admitted = statuses[200] ?? 0;
  return {
    load: `${load}x`,
    budget: budgeted ? "yes" : "no (static split)",
    sent,
    statuses,
    callsPerAdmitted: budgeted ? +(calls / Math.max(1, admitted)).toFixed(4) : null,
    objectCalls: calls,
    p50: +quantile(latencies, 0.5).toFixed(1),
    p99: +quantile(latencies, 0.99).toFixed(1),
    originPeak: origin.o.peak,
    goodput: +(origin.o.busyMs / (BUDGET * window)).toFixed(3),
  };
}

const rows = [];
for (const load of [1, 10]) {
  for (const budgeted of [false, true]) {
    const row = await run(load, budgeted);
    rows.push(row);
    console.log(JSON.stringify(row));
  }
}
console.log(`\nbudget ${BUDGET}, ${GATEWAYS} gateways, origin latency ${LATENCY_MS} ms (capacity ${CAPACITY_RPS} req/s), ${SECONDS} s per run`);
console.log("| load | budget | sent | 200 | 503 | object calls / admitted | p50 ms | p99 ms | added p50 / p99 ms | origin peak (budget 12) | goodput |");
console.log("|---|---|---|---|---|---|---|---|---|---|---|");
for (let i = 0; i < rows.length; i++) {
  const r = rows[i];
  const base = rows[i - (i % 2)];
  const added = r.budget === "yes" ? `${(r.p50 - base.p50).toFixed(1)} / ${(r.p99 - base.p99).toFixed(1)}` : "-";
  console.log(`| ${r.load} | ${r.budget} | ${r.sent} | ${r.statuses[200] ?? 0} | ${r.statuses[503] ?? 0} | ${r.callsPerAdmitted ?? "-"} | ${r.p50} | ${r.p99} | ${added} | ${r.originPeak} | ${r.goodput} |`);
}
if (JSON_OUT) {
  const meta = { budget: BUDGET, gateways: GATEWAYS, latencyMs: LATENCY_MS, capacityRps: CAPACITY_RPS, seconds: SECONDS };
  writeFileSync(JSON_OUT, JSON.stringify({ meta, rows }, null, 2));
}
