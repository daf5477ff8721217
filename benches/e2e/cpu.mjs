// workerd CPU per response, two cases, each measured in alternating rounds
// with every worker of the case alive:
//   overload: the edgeshed worker under overload (almost every answer a shed
//     503) against the floor worker (a JS worker that only answers 503);
//   proxied: the edgeshed worker's prefix route with room for every request
//     (its body streamed, permits held until it is sent) against a plain JS
//     proxy worker (`return fetch(origin + path)`), origin `p` of 64 at once
//     in 1 ms, 16 connections.
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
const PROXIED_REQUESTS = QUICK ? 1_000 : 3_000;
const PROXIED_CONNECTIONS = 16;

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

/** `amount` requests on `path` of `url` over `connections` connections; the status counts. */
function load(url, amount, path, connections) {
  const statuses = {};
  return new Promise((resolve, reject) => {
    const instance = autocannon({ url: new URL(path, url).href, connections, amount, timeout: 10 }, (error, result) =>
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
/**
 * Alternating rounds of `requests` on `path` for every worker of `workers`;
 * `allowed(name)`: the statuses its warm-up may answer. Returns per worker
 * the CPU ms per response of each round, and the status totals.
 */
async function rounds(workers, path, requests, connections, allowed) {
  const perRound = Object.fromEntries(Object.keys(workers).map((name) => [name, []]));
  const statusTotals = Object.fromEntries(Object.keys(workers).map((name) => [name, {}]));
  // Untimed check and warm-up.
  for (const [name, w] of Object.entries(workers)) {
    const { statuses, errors } = await load(w.url, 500, path, connections);
    const outside = Object.keys(statuses).filter((s) => !allowed(name).includes(s));
    if (errors > 0 || outside.length > 0) throw new Error(`${name}: ${errors} errors, statuses ${JSON.stringify(statuses)}`);
  }
  for (let round = 0; round < ROUNDS; round++) {
    const order = Object.keys(workers);
    if (round % 2 === 1) order.reverse();
    for (const name of order) {
      const { pid, url } = workers[name];
      const before = cpuMs(pid);
      const { statuses } = await load(url, requests, path, connections);
      const spent = cpuMs(pid) - before;
      const responses = Object.values(statuses).reduce((a, b) => a + b, 0);
      for (const [s, n] of Object.entries(statuses)) statusTotals[name][s] = (statusTotals[name][s] ?? 0) + n;
      perRound[name].push(spent / Math.max(1, responses));
    }
  }
  return { perRound, statusTotals };
}
const ratiosOf = (perRound, a, b) => perRound[a].map((x, i) => x / perRound[b][i]);

let overload;
let proxied;
try {
  overload = await rounds(workers, "/aggregate", REQUESTS, CONNECTIONS, (name) => (name === "floor 503" ? ["503"] : ["200", "503"]));
} finally {
  for (const w of Object.values(workers)) await w.mf.dispose();
  origins.kill();
}
// The proxied case: its own origin, fast and wide, so that nothing is shed.
const proxyOrigin = fork(join(ROOT, "benches/e2e/origin.mjs"), [JSON.stringify({ names: ["p"], concurrency: 64, latencyMs: 1 })]);
const proxyPorts = await new Promise((resolve) => proxyOrigin.once("message", (m) => resolve(m.ports)));
const proxyConfig = {
  origins: { p: { url: `http://127.0.0.1:${proxyPorts.p}`, maxInFlight: 64, maxQueue: 0, timeoutMs: 30_000 } },
  routes: [{ prefix: "/proxy/", origin: "p" }],
};
const plainProxy = `export default { fetch(request, env) {
  const url = new URL(request.url);
  return fetch(env.ORIGIN + url.pathname.slice("/proxy".length) + url.search, { method: request.method, headers: request.headers });
} };`;
const proxies = {
  edgeshed: await startWorkerd({ scriptPath: join(ROOT, "worker/index.mjs"), bindings: { EDGESHED: proxyConfig } }),
  "plain proxy": await startWorkerd({ script: plainProxy, bindings: { ORIGIN: proxyConfig.origins.p.url } }),
};
if (BEFORE) {
  const root = rootWith(BEFORE);
  proxies.before = await startWorkerd({ scriptPath: join(root, "worker/index.mjs"), modulesRoot: root, bindings: { EDGESHED: proxyConfig } });
}
try {
  proxied = await rounds(proxies, "/proxy/x", PROXIED_REQUESTS, PROXIED_CONNECTIONS, () => ["200"]);
} finally {
  for (const w of Object.values(proxies)) await w.mf.dispose();
  proxyOrigin.kill();
}
const { perRound, statusTotals } = overload;
const ratios = ratiosOf(perRound, "edgeshed", "floor 503");
const beforeRatios = BEFORE ? ratiosOf(perRound, "before", "floor 503") : [];
const afterOverBefore = BEFORE ? ratiosOf(perRound, "edgeshed", "before") : [];
const proxyRatios = ratiosOf(proxied.perRound, "edgeshed", "plain proxy");
const proxyBeforeRatios = BEFORE ? ratiosOf(proxied.perRound, "before", "plain proxy") : [];

const fmt = (x) => x.toFixed(3);
const print = (title, { perRound, statusTotals }) => {
  console.log(title);
  for (const [name, xs] of Object.entries(perRound)) {
    console.log(`  ${name.padEnd(11)} ${fmt(median(xs))} ms  [${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))}]  statuses ${JSON.stringify(statusTotals[name])}`);
  }
};
print(`workerd CPU per response under overload, ${ROUNDS} alternating rounds of ${REQUESTS} requests over ${CONNECTIONS} connections (median [min–max])`, overload);
console.log(`  ratio edgeshed / floor 503 = ${median(ratios).toFixed(2)} (median of per-round ratios; goal ≤ 1.15)`);
if (BEFORE) {
  console.log(`  ratio before (${BEFORE}) / floor 503 = ${median(beforeRatios).toFixed(2)}`);
  console.log(`  ratio edgeshed / before = ${median(afterOverBefore).toFixed(2)} (per round: ${afterOverBefore.map((x) => x.toFixed(2)).join(" ")})`);
}
print(`workerd CPU per proxied response, ${ROUNDS} alternating rounds of ${PROXIED_REQUESTS} requests over ${PROXIED_CONNECTIONS} connections`, proxied);
console.log(`  ratio edgeshed / plain proxy = ${median(proxyRatios).toFixed(2)} (median of per-round ratios; goal ≤ 1.15)`);
if (BEFORE) console.log(`  ratio before / plain proxy = ${median(proxyBeforeRatios).toFixed(2)}`);
if (JSON_OUT) {
  // `summary`: the medians printed above (what scripts/benchmarks-md.mjs reads).
  const summary = {
    msPerResponse: Object.fromEntries(Object.entries(perRound).map(([name, xs]) => [name, median(xs)])),
    edgeshedOverFloor: median(ratios),
    beforeOverFloor: BEFORE ? median(beforeRatios) : null,
    edgeshedOverBefore: BEFORE ? median(afterOverBefore) : null,
    proxied: {
      msPerResponse: Object.fromEntries(Object.entries(proxied.perRound).map(([name, xs]) => [name, median(xs)])),
      edgeshedOverPlain: median(proxyRatios),
      beforeOverPlain: BEFORE ? median(proxyBeforeRatios) : null,
    },
  };
  writeFileSync(
    JSON_OUT,
    JSON.stringify({ rounds: ROUNDS, requests: REQUESTS, perRound, ratios, beforeRatios, statusTotals, proxied, summary }, null, 2),
  );
}
