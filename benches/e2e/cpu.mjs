// workerd CPU per response: the edgeshed worker under overload (almost every
// answer a shed 503) against the floor worker (a JS worker that only answers
// 503), both alive in one run, measured in alternating rounds.
//
//   node benches/e2e/cpu.mjs              # 7 rounds of 4,000 requests each
//   node benches/e2e/cpu.mjs --quick      # 3 rounds of 1,500 (--rounds N: N rounds)
//   node benches/e2e/cpu.mjs --json out.json
//   node benches/e2e/cpu.mjs --before DIR     # also an older build, side by side: DIR is its
//       checkout (worker/ and dist/worker/, as run-all.mjs --before REF makes) or its dist/worker
//
// Setup as in benches/e2e/run.mjs: origins `a` and `b` (4 at once, 50 ms
// each) in a child process; the edgeshed worker fans out to both with
// maxInFlight 4 and maxQueue 0. Load: autocannon, closed loop, 32
// connections, a fixed number of requests per round, so the edgeshed worker
// admits 4 at a time and sheds the rest. CPU = utime + stime of the workerd
// process (/proc/PID/stat, 10 ms ticks) over the round, divided by the
// responses. Only the ratio within the run counts (the machine is shared);
// it is the median of the per-round ratios. Needs dist/worker
// (scripts/build-worker.sh).
import { fork } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { ROOT, cpuMs, startWorkerd, median } from "../support/workerd.mjs";

const args = process.argv.slice(2);
const QUICK = args.includes("--quick");
const JSON_OUT = args.includes("--json") ? args[args.indexOf("--json") + 1] : null;
const BEFORE = args.includes("--before") ? args[args.indexOf("--before") + 1] : null;
const ROUNDS = Number(args.includes("--rounds") ? args[args.indexOf("--rounds") + 1] : QUICK ? 3 : 7);
const REQUESTS = QUICK ? 1_500 : 4_000;
const CONNECTIONS = 32;

const origins = fork(join(ROOT, "benches/e2e/origin.mjs"), [JSON.stringify({ names: ["a", "b"], concurrency: 4, latencyMs: 50 })]);
const ports = await new Promise((resolve) => origins.once("message", (m) => resolve(m.ports)));
const originUrl = (name) => `http://127.0.0.1:${ports[name]}`;

const edgeshedConfig = {
  retryAfterSeconds: 1,
  origins: {
    a: { url: originUrl("a"), maxInFlight: 4, maxQueue: 0, timeoutMs: 30_000 },
    b: { url: originUrl("b"), maxInFlight: 4, maxQueue: 0, timeoutMs: 30_000 },
  },
  routes: [{ path: "/aggregate", fanout: [{ origin: "a", path: "/a", required: true }, { origin: "b", path: "/b", required: true }] }],
};
const floorScript = `export default { fetch() { return new Response('{"error":"overloaded"}', { status: 503, headers: { "retry-after": "1" } }); } };`;

/** `amount` requests on `url` over CONNECTIONS connections; the status counts. */
function load(url, amount) {
  const statuses = {};
  return new Promise((resolve, reject) => {
    const instance = autocannon({ url: new URL("/aggregate", url).href, connections: CONNECTIONS, amount, timeout: 10 }, (error, result) =>
      error ? reject(error) : resolve({ statuses, errors: result.errors + result.timeouts }),
    );
    instance.on("response", (_client, status) => (statuses[status] = (statuses[status] ?? 0) + 1));
  });
}

/**
 * The root of another build: `dir` itself when it is a checkout with its
 * own worker/ and dist/worker/, else this worker's entry with `dir` (a
 * dist/worker directory) in a scratch root.
 */
function rootWith(dist) {
  if (existsSync(join(dist, "worker/index.mjs")) && existsSync(join(dist, "dist/worker"))) return dist;
  const root = mkdtempSync(join(tmpdir(), "edgeshed-before-"));
  cpSync(join(ROOT, "worker"), join(root, "worker"), { recursive: true });
  cpSync(dist, join(root, "dist/worker"), { recursive: true });
  return root;
}

const workers = {
  edgeshed: await startWorkerd({ scriptPath: join(ROOT, "worker/index.mjs"), bindings: { EDGESHED: edgeshedConfig } }),
  "floor 503": await startWorkerd({ script: floorScript }),
};
if (BEFORE) {
  const root = rootWith(BEFORE);
  workers.before = await startWorkerd({ scriptPath: join(root, "worker/index.mjs"), modulesRoot: root, bindings: { EDGESHED: edgeshedConfig } });
}
const perRound = Object.fromEntries(Object.keys(workers).map((name) => [name, []]));
const ratios = [];
const beforeRatios = [];
const afterOverBefore = [];
const statusTotals = Object.fromEntries(Object.keys(workers).map((name) => [name, {}]));
try {
  // Untimed check and warm-up: the edgeshed worker admits some and sheds the rest.
  for (const [name, w] of Object.entries(workers)) {
    const { statuses, errors } = await load(w.url, 500);
    const allowed = name === "floor 503" ? ["503"] : ["200", "503"];
    const outside = Object.keys(statuses).filter((s) => !allowed.includes(s));
    if (errors > 0 || outside.length > 0) throw new Error(`${name}: ${errors} errors, statuses ${JSON.stringify(statuses)}`);
  }
  for (let round = 0; round < ROUNDS; round++) {
    const order = Object.keys(workers);
    if (round % 2 === 1) order.reverse();
    const ms = {};
    for (const name of order) {
      const { pid, url } = workers[name];
      const before = cpuMs(pid);
      const { statuses } = await load(url, REQUESTS);
      const spent = cpuMs(pid) - before;
      const responses = Object.values(statuses).reduce((a, b) => a + b, 0);
      for (const [s, n] of Object.entries(statuses)) statusTotals[name][s] = (statusTotals[name][s] ?? 0) + n;
      ms[name] = spent / Math.max(1, responses);
      perRound[name].push(ms[name]);
    }
    ratios.push(ms.edgeshed / ms["floor 503"]);
    if (BEFORE) beforeRatios.push(ms.before / ms["floor 503"]);
    if (BEFORE) afterOverBefore.push(ms.edgeshed / ms.before);
  }
} finally {
  for (const w of Object.values(workers)) await w.mf.dispose();
  origins.kill();
}

const fmt = (x) => x.toFixed(3);
console.log(`workerd CPU per response, ${ROUNDS} alternating rounds of ${REQUESTS} requests over ${CONNECTIONS} connections (median [min–max])`);
for (const [name, xs] of Object.entries(perRound)) {
  console.log(`  ${name.padEnd(10)} ${fmt(median(xs))} ms  [${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))}]  statuses ${JSON.stringify(statusTotals[name])}`);
}
console.log(`  ratio edgeshed / floor 503 = ${median(ratios).toFixed(2)} (median of per-round ratios)`);
if (BEFORE) {
  console.log(`  ratio before (${BEFORE}) / floor 503 = ${median(beforeRatios).toFixed(2)}`);
  console.log(`  ratio edgeshed / before = ${median(afterOverBefore).toFixed(2)} (per round: ${afterOverBefore.map((x) => x.toFixed(2)).join(" ")})`);
}
if (JSON_OUT) {
  // `summary`: the medians printed above (what scripts/benchmarks-md.mjs reads).
  const summary = {
    msPerResponse: Object.fromEntries(Object.entries(perRound).map(([name, xs]) => [name, median(xs)])),
    edgeshedOverFloor: median(ratios),
    beforeOverFloor: BEFORE ? median(beforeRatios) : null,
    edgeshedOverBefore: BEFORE ? median(afterOverBefore) : null,
  };
  writeFileSync(JSON_OUT, JSON.stringify({ rounds: ROUNDS, requests: REQUESTS, perRound, ratios, beforeRatios, statusTotals, summary }, null, 2));
}
