// Issue 6's bench (was run.mjs; run.mjs is now issue 13's goodput bench).
// End to end on workerd: the edgeshed worker (worker/index.mjs + dist/worker)
// vs two baseline workers doing the same two-origin fan-out — p-limit
// (bounded concurrency per origin, unbounded queue) and naive (no limit) —
// under load from autocannon at 1×, 3× and 10× the origins' capacity.
//
//   node benches/e2e/run.mjs                      # 10 s per level (~2.5 min)
//   node benches/e2e/run.mjs --quick              # 2 s per level (~45 s)
//   node benches/e2e/run.mjs --duration 5 --only edgeshed --levels 10
//   node benches/e2e/run.mjs --json out.json
//
// Setup (all on 127.0.0.1): two origins `a` and `b` in a child process
// (benches/e2e/origin.mjs), each handling at most CONCURRENCY requests at
// once in LATENCY_MS and queueing the rest, so the capacity of a fan-out
// over both is CONCURRENCY × 1000 / LATENCY_MS requests/s. Every worker
// answers GET /aggregate by calling both origins and returning
// {"results": {...}, "degraded": []}. edgeshed's origins are configured with
// maxInFlight = CONCURRENCY and maxQueue 0 (over capacity: 503 at once).
//
// Load: autocannon's `overallRate` releases each connection's quota at the
// start of each second, so the rate is split over STAGGER instances started
// 1000/STAGGER ms apart (smaller bursts, spread over the second). Each
// (worker, level) pair gets a fresh workerd (Miniflare): VmRSS of that
// workerd process is read before the load (after a warm-up), every 100 ms
// during it (peak), and AFTER_MS after it ends. Printed as
// "RSS start / before → peak → after": start = after 20 sequential requests,
// before = after WARMUP_S of the same load and a pause (the growth goal is
// measured from here), peak = highest 100 ms sample during the measured run.
// --soak S: only edgeshed and the floor worker at 10× for S seconds, with the
// RSS every second (does the growth level off?).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, cpuMs, startWorkerd, bundle, rssKiB } from "../support/workerd.mjs";
import { CONNECTIONS, STAGGER, autocannonShare, shareOf } from "./lib/arrivals.mjs";
import { startOrigins } from "./lib/origins.mjs";

const args = process.argv.slice(2);
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const QUICK = args.includes("--quick");
const DURATION_S = Number(opt("--soak", opt("--duration", QUICK ? 2 : 10)));
const LEVELS = args.includes("--soak") ? [10] : opt("--levels", "1,3,10").split(",").map(Number);
const ONLY = opt("--only", null);
const JSON_OUT = opt("--json", null);
const SOAK_S = opt("--soak", null);

const CONCURRENCY = 4;
const LATENCY_MS = 50;
const CAPACITY = (CONCURRENCY * 1000) / LATENCY_MS; // requests/s of the fan-out
const TIMEOUT_S = 10; // autocannon's per-request timeout
const AFTER_MS = 2000;
const WARMUP_S = QUICK ? 1 : 3; // load before the measured run (V8 heap and buffers reach their working size)
const SETTLE_MS = 2000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ------------------------------------------------------------ origins ---

const origins = await startOrigins({ names: ["a", "b"], concurrency: CONCURRENCY, latencyMs: LATENCY_MS });
const originUrl = origins.url;
const originStats = origins.stats;
const originReset = origins.reset;

// ------------------------------------------------------------ workers ---

const edgeshedConfig = {
  retryAfterSeconds: 1,
  origins: {
    a: { url: originUrl("a"), maxInFlight: CONCURRENCY, maxQueue: 0, timeoutMs: 30_000 },
    b: { url: originUrl("b"), maxInFlight: CONCURRENCY, maxQueue: 0, timeoutMs: 30_000 },
  },
  routes: [
    {
      path: "/aggregate",
      fanout: [
        { origin: "a", path: "/a", required: true },
        { origin: "b", path: "/b", required: true },
      ],
    },
  ],
};
const baselineBinding = { origins: { a: originUrl("a"), b: originUrl("b") }, maxInFlight: CONCURRENCY };
const workers = {
  edgeshed: {
    start: () => startWorkerd({ scriptPath: join(ROOT, "worker/index.mjs"), bindings: { EDGESHED: edgeshedConfig } }),
    contract: new Set([200, 503]),
  },
  "p-limit": {
    bundle: bundle(join(ROOT, "benches/e2e/workers/plimit.mjs")),
    async start() {
      return startWorkerd({ ...(await this.bundle), bindings: { BENCH: baselineBinding }});
    },
    contract: new Set([200]),
  },
  naive: {
    start: () => startWorkerd({ scriptPath: join(ROOT, "benches/e2e/workers/naive.mjs"), bindings: { BENCH: baselineBinding } }),
    contract: new Set([200]),
  },
  // Calibration, not a peer: a JS worker that answers 503 at once (no origin
  // call). Its latency under the same load is the floor of this setup
  // (autocannon + Miniflare's entry worker + workerd on a shared 2-core box).
  "floor 503": {
    script: `export default { fetch() { return new Response('{"error":"overloaded"}', { status: 503, headers: { "retry-after": "1" } }); } };`,
    start() {
      return startWorkerd({ script: this.script });
    },
    contract: new Set([503]),
    levels: [10],
    noWarmup: true,
  },
};

// ---------------------------------------------------------------- run ---

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** autocannon at `rate` req/s for `seconds` on `url`, split over STAGGER instances. */
async function load(url, rate, seconds, onResponse) {
  const instances = [];
  for (let i = 0; i < STAGGER; i++) {
    const share = shareOf(rate, i);
    if (share === 0) continue;
    await sleep(1000 / STAGGER);
    instances.push(autocannonShare(url, share, seconds, TIMEOUT_S, onResponse));
  }
  return Promise.all(instances);
}

async function level(name, w, k) {
  const rate = Math.round(k * CAPACITY);
  const { mf, url, pid, log } = await w.start();
  try {
    // Warm-up: sequential requests, then WARMUP_S of the same load, then a pause.
    for (let i = 0; i < 20 && !w.noWarmup; i++) {
      const r = await fetch(new URL("/aggregate", url));
      await r.text();
      if (r.status !== 200) throw new Error(`${name}: warm-up answered ${r.status}`);
    }
    const rssStart = rssKiB(pid);
    await load(url, rate, WARMUP_S);
    await sleep(SETTLE_MS);
    await originReset();
    const rssBefore = rssKiB(pid);
    const cpu0 = cpuMs(pid);
    let rssPeak = rssBefore;
    const timeline = [];
    let ticks = 0;
    const sampler = setInterval(() => {
      const v = rssKiB(pid);
      if (v > rssPeak) rssPeak = v;
      if (ticks++ % 10 === 0) timeline.push(v);
    }, 100);

    const byStatus = new Map();
    const t0 = performance.now();
    const results = await load(url, rate, DURATION_S, (status, ms) => {
      let list = byStatus.get(status);
      if (!list) byStatus.set(status, (list = []));
      list.push(ms);
    });
    const elapsed = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    const cpu1 = cpuMs(pid);
    const atEnd = await originStats();
    await sleep(AFTER_MS);
    const rssAfter = rssKiB(pid);

    const statuses = Object.fromEntries([...byStatus].map(([s, l]) => [s, l.length]));
    const lat = (s) => {
      const l = (byStatus.get(s) ?? []).sort((a, b) => a - b);
      return { n: l.length, p50: percentile(l, 50), p99: percentile(l, 99) };
    };
    const errors = results.reduce((n, r) => n + r.errors, 0);
    const timeouts = results.reduce((n, r) => n + r.timeouts, 0);
    const sent = results.reduce((n, r) => n + r.requests.sent, 0);
    const responses = [...byStatus.values()].reduce((n, l) => n + l.length, 0);
    const outside = Object.entries(statuses)
      .filter(([s]) => !w.contract.has(Number(s)))
      .reduce((n, [, c]) => n + c, 0);
    return {
      worker: name,
      level: k,
      offeredRps: rate,
      sent,
      responses,
      elapsedS: elapsed,
      okRps: (statuses[200] ?? 0) / elapsed,
      rps: responses / elapsed,
      statuses,
      errors,
      timeouts,
      outsideContract: outside + errors + timeouts,
      admitted: lat(200),
      shed: lat(503),
      rssKiB: { start: rssStart, before: rssBefore, peak: rssPeak, after: rssAfter, perSecond: timeline },
      cpuMsPerResponse: (cpu1 - cpu0) / Math.max(1, responses),
      origins: atEnd,
      workerdLog: { ...log, sample: log.sample },
    };
  } finally {
    await mf.dispose();
  }
}

const MiB = (kib) => (kib / 1024).toFixed(1);
const ms = (x) => (Number.isNaN(x) ? "–" : x.toFixed(1));
console.log(
  `origins a, b: ${CONCURRENCY} at once, ${LATENCY_MS} ms each → fan-out capacity ${CAPACITY} req/s; ` +
    `autocannon 8.0.0, ${DURATION_S} s per level, ${STAGGER} staggered instances, ≤ ${CONNECTIONS} connections, timeout ${TIMEOUT_S} s`,
);
const rows = [];
for (const [name, w] of Object.entries(workers)) {
  if (ONLY && !name.includes(ONLY)) continue;
  if (SOAK_S && !["edgeshed", "floor 503"].includes(name)) continue;
  for (const k of w.levels ? LEVELS.filter((l) => w.levels.includes(l)) : LEVELS) {
    const r = await level(name, w, k);
    rows.push(r);
    const st = Object.entries(r.statuses)
      .map(([s, c]) => `${s}:${c}`)
      .join(" ");
    console.log(
      `${name.padEnd(9)} ${String(k).padStart(2)}× (${r.offeredRps} req/s offered): ${r.responses} responses (${r.rps.toFixed(0)}/s), ${r.okRps.toFixed(0)} ok/s  [${st}]` +
        ` errors ${r.errors} timeouts ${r.timeouts} | 200 p50 ${ms(r.admitted.p50)} p99 ${ms(r.admitted.p99)} ms` +
        ` | 503 p50 ${ms(r.shed.p50)} p99 ${ms(r.shed.p99)} ms | RSS ${MiB(r.rssKiB.start)} / ${MiB(r.rssKiB.before)} → peak ${MiB(r.rssKiB.peak)} → after ${MiB(r.rssKiB.after)} MiB` +
        ` | workerd CPU ${r.cpuMsPerResponse.toFixed(2)} ms/resp | origin a peak active ${r.origins.a.peakActive} queued ${r.origins.a.peakQueued}` +
        (SOAK_S ? `\n  RSS per second (MiB): ${r.rssKiB.perSecond.map((v) => MiB(v)).join(" ")}` : "") +
        (r.workerdLog.lines ? ` | workerd log: ${r.workerdLog.lines} lines (${r.workerdLog.crossRequest} cross-request, ${r.workerdLog.hung} hung)` : ""),
    );
  }
}

// Goals (at 10×, for edgeshed).
const es = rows.find((r) => r.worker === "edgeshed" && r.level === 10);
if (es) {
  const growth = (es.rssKiB.peak - es.rssKiB.before) / 1024;
  const growthAfter = (es.rssKiB.after - es.rssKiB.before) / 1024;
  const goals = [
    [`RSS growth ≤ 10 MB (peak ${growth.toFixed(1)} MiB, after ${growthAfter.toFixed(1)} MiB)`, Math.max(growth, growthAfter) <= 10],
    [`shed p99 ≤ 5 ms (${ms(es.shed.p99)} ms)`, es.shed.p99 <= 5],
    [`admitted p99 ≤ ${LATENCY_MS} + 5 ms (${ms(es.admitted.p99)} ms)`, es.admitted.p99 <= LATENCY_MS + 5],
    [`zero statuses outside the contract (${es.outsideContract})`, es.outsideContract === 0],
  ];
  for (const name of ["p-limit", "naive"]) {
    const b = rows.find((r) => r.worker === name && r.level === 10);
    if (b) goals.push([`${name} RSS grows at 10× (peak +${((b.rssKiB.peak - b.rssKiB.before) / 1024).toFixed(1)} MiB)`, b.rssKiB.peak > b.rssKiB.before]);
  }
  console.log("\n## Goals at 10×");
  for (const [what, ok] of goals) console.log(`  ${ok ? "✓" : "✗"} ${what}`);
}
if (JSON_OUT) writeFileSync(JSON_OUT, JSON.stringify(rows, null, 2));
origins.close();
