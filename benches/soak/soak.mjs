// Soak: the edge worker (worker/index.mjs + dist/worker) in real workerd
// (Miniflare) under ~10x its origins' capacity for a long run, then checks
// that nothing was lost or trapped and that memory stayed bounded.
//
//   node benches/soak/soak.mjs                    # 200,000 requests (cap 900 s)
//   node benches/soak/soak.mjs --seconds 10       # 10 s (the test suite's smoke run)
//   node benches/soak/soak.mjs --requests 50000 --connections 100 --factor 10 --json out.json
//
// Needs dist/worker (./scripts/build-worker.sh). Everything stays on
// 127.0.0.1. Stops by itself when --requests have been answered or --seconds
// have passed (whichever comes first; with only --seconds, time decides).
//
// Setup: three origins in a child process (benches/soak/origins.mjs), each
// with a fixed capacity (at most C requests at once, L ms each):
//   users  C=4 L=25 ms  (160 req/s)  required on /aggregate (deadline 250 ms);
//          every 200th answers 500 (-> 502), every 250th takes 400 ms (-> 504 deadline)
//   recs   C=2 L=10 ms              optional on /aggregate (degraded when shed)
//   files  C=2 L=25 ms  (80 req/s)   behind the prefix route /files/ (2 KiB body);
//          every 500th takes 1500 ms (past timeoutMs 1000 -> 504 timeout)
// Capacity = 160 + 80 = 240 successful req/s; the client offers --factor
// (10) times that, 2/3 to /aggregate and 1/3 to /files/, paced over
// --connections (200) keep-alive connections (node:http Agent). When the
// worker answers slower than the pace, the connections run closed-loop.
//
// Invariants (exit 1 when one fails):
//   - every answer is 200, 502, 503 or 504 with the documented body (and
//     Retry-After on 503); a proxied 200 carries the whole 2 KiB body;
//   - no client-side error or timeout (15 s); a request whose reused socket
//     workerd closed under it (the keep-alive race) is resent once and
//     counted (client.mjs), at most max(connections, answers / 1000) times;
//   - afterwards inFlight 0 and queued 0 in every scope of /__edgeshed/stats,
//     and the global counters account for every answer;
//   - the worker's metrics show no task still running, lost or holding a
//     proxied body;
//   - workerd's log has no "Uncaught", "hung", "RuntimeError", "panicked";
//   - workerd's RSS stays under 1 GiB and, on runs of 60 s or more, levels
//     off: the max of the last quarter of the 1 s samples is at most 1.25x +
//     64 MiB the max of the second quarter;
//   - the same instance then answers normal requests (200).
import { randomUUID } from "node:crypto";
import { fork } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { setPriority } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Log, LogLevel, Miniflare } from "miniflare";
// A temp folder of the soak's own (Miniflare's is not removed on a quick exit).
import "../../tests/worker/support/own-tmpdir.mjs";
import { idle, ROOT, wranglerToml } from "../../tests/worker/support/worker.mjs";
import { soakClient } from "./client.mjs";
import { rssKiB, workerdPids } from "../support/workerd.mjs";

// ------------------------------------------------------------------ args ---

function parseArgs(argv) {
  const args = { worker: "edgeshed", connections: 200, factor: 10, queues: true, retries: 1, json: null, log: join(ROOT, "artifacts/soak/workerd.log") };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${key} needs a value`);
      return v;
    };
    if (key === "--seconds") args.seconds = Number(value());
    else if (key === "--requests") args.requests = Number(value());
    else if (key === "--connections") args.connections = Number(value());
    else if (key === "--factor") args.factor = Number(value());
    else if (key === "--json") args.json = value();
    else if (key === "--worker") {
      args.worker = value();
      if (args.worker !== "edgeshed" && args.worker !== "plain") throw new Error("--worker takes edgeshed or plain");
    } else if (key === "--queues") {
      const v = value();
      if (v !== "on" && v !== "off") throw new Error("--queues takes on or off");
      args.queues = v === "on";
    }
    else if (key === "--log") args.log = value();
    else if (key === "--retries") {
      args.retries = Number(value());
      if (args.retries !== 0 && args.retries !== 1) throw new Error("--retries takes 0 or 1");
    }
    else if (key === "--help" || key === "-h") {
      console.log("usage: node benches/soak/soak.mjs [--seconds N] [--requests N] [--connections 200] [--factor 10] [--queues on|off] [--worker edgeshed|plain] [--retries 1|0] [--json FILE] [--log FILE]");
      process.exit(0);
    } else throw new Error(`unknown argument ${key}`);
  }
  if (args.seconds === undefined && args.requests === undefined) args.requests = 200_000;
  args.seconds ??= 900;
  args.requests ??= Infinity;
  for (const k of ["seconds", "requests", "connections", "factor"]) {
    if (!(args[k] > 0)) throw new Error(`--${k} must be a positive number`);
  }
  return args;
}

const args = parseArgs(process.argv.slice(2));

// --------------------------------------------------------------- origins ---

const ORIGINS = {
  users: { capacity: 4, latencyMs: 25, failEvery: 200, slowEvery: 250, slowMs: 400 },
  recs: { capacity: 2, latencyMs: 10 },
  files: { capacity: 2, latencyMs: 25, slowEvery: 500, slowMs: 1500, bodyBytes: 2048 },
};
const CAPACITY = { aggregate: (4 * 1000) / 25, files: (2 * 1000) / 25 }; // successful req/s
const FILE_BYTES = ORIGINS.files.bodyBytes;

const originsChild = fork(join(ROOT, "benches/soak/origins.mjs"), [JSON.stringify(ORIGINS)], {
  stdio: ["ignore", "inherit", "inherit", "ipc"],
});
const ports = await new Promise((resolve, reject) => {
  originsChild.once("message", (m) => resolve(m.ports));
  originsChild.once("exit", (code) => reject(new Error(`origins exited (${code})`)));
});
function originStats() {
  return new Promise((resolve) => {
    originsChild.once("message", (m) => resolve(m.stats));
    originsChild.send("stats");
  });
}

// ---------------------------------------------------------------- worker ---

// --queues on (default): bounded admission queues, as in the demo
// configuration (a released permit is handed to a request waiting in another
// request's context). --queues off: maxQueue 0 everywhere (shed at once).
const queue = (maxQueue, queueTimeoutMs) => (args.queues ? { maxQueue, queueTimeoutMs } : { maxQueue: 0 });
// The admin endpoints are closed by default: the soak reads them with a
// bearer token (the constant-time check runs on every stats sample).
const STATS_TOKEN = randomUUID();
const CONFIG = {
  retryAfterSeconds: 1,
  statsToken: STATS_TOKEN,
  global: { maxInFlight: 64, ...queue(64, 50) },
  origins: {
    users: { url: `http://127.0.0.1:${ports.users}`, maxInFlight: 4, ...queue(4, 20), timeoutMs: 1000 },
    recs: { url: `http://127.0.0.1:${ports.recs}`, maxInFlight: 2, maxQueue: 0, timeoutMs: 1000 },
    files: { url: `http://127.0.0.1:${ports.files}`, maxInFlight: 2, ...queue(2, 20), timeoutMs: 1000 },
  },
  routes: [
    {
      path: "/aggregate",
      deadlineMs: 250,
      fanout: [
        { origin: "users", path: "/u", required: true },
        { origin: "recs", path: "/r", required: false },
      ],
    },
    { prefix: "/files/", origin: "files" },
  ],
};

const TRAP = /Uncaught|hung|RuntimeError|panicked|unreachable|unwound/i;
const logLines = [];
const trapLines = [];
function logLine(source, line) {
  if (!line) return;
  if (logLines.length < 20_000) logLines.push(`[${source}] ${line}`);
  if (TRAP.test(line)) trapLines.push(`[${source}] ${line}`);
}
// Miniflare logs every request at INFO; keep warnings and errors only.
class CapturingLog extends Log {
  constructor() {
    super(process.env.SOAK_LOG_LEVEL ? LogLevel[process.env.SOAK_LOG_LEVEL] : LogLevel.WARN);
  }
  logWithLevel(level, message) {
    if (level <= this.level) logLine(`miniflare:${LogLevel[level] ?? level}`, String(message));
  }
}

const toml = wranglerToml();
const mf = new Miniflare({
  modules: true,
  modulesRoot: ROOT,
  scriptPath: join(ROOT, args.worker === "plain" ? "benches/soak/plain-worker.js" : "worker/index.mjs"),
  modulesRules: [
    { type: "ESModule", include: ["**/*.js", "**/*.mjs"] },
    { type: "CompiledWasm", include: ["**/*.wasm"] },
  ],
  compatibilityDate: toml.compatibility_date,
  compatibilityFlags: toml.compatibility_flags,
  cf: false,
  verbose: Boolean(process.env.SOAK_VERBOSE), // workerd's own diagnostics into the log
  bindings: { EDGESHED: CONFIG },
  log: new CapturingLog(),
  handleRuntimeStdio(stdout, stderr) {
    createInterface({ input: stdout }).on("line", (l) => logLine("workerd:stdout", l));
    createInterface({ input: stderr }).on("line", (l) => logLine("workerd:stderr", l));
  },
  handleStructuredLogs({ level, message }) {
    logLine(`worker:${level}`, message);
  },
});
const base = new URL(await mf.ready);

// The load generator yields the CPU to the system under test. Client,
// workerd and origins share this machine's cores (2 on CI, often shared
// with other jobs). Left at equal priority, the client's 200 closed-loop
// connections out-compete workerd, which then runs without a single idle
// moment; in that state workerd serves newly arriving requests ahead of
// the timers and subrequests of requests already running: the first
// requests admitted to the origins hang with their permits (their 250 ms
// deadline timers fire only when the load stops), everything else is shed,
// and requests queued on some keep-alive connections are reset after
// seconds (ECONNRESET). The plain-JS stand-in (--worker plain) stalls the
// same way, and raising workerd's priority instead cures it as well, so it
// is workerd's scheduling under CPU starvation, not edgeshed. The soak
// measures the gateway under 10x its origins' capacity, not a CPU-starved
// workerd: so the client (this process; workerd and the origins were
// spawned before and keep their priority) runs at nice +10. On a
// dedicated load test the client would be on another machine.
const CLIENT_NICE = Number(process.env.SOAK_CLIENT_NICE ?? 10);
try {
  setPriority(CLIENT_NICE);
} catch (error) {
  console.warn(`soak: could not lower the client's priority (${error.code ?? error.message})`);
}

// ------------------------------------------------------------------- RSS ---

// workerdPids / rssKiB: benches/support/workerd.mjs.
const pids = workerdPids();
if (pids.length === 0) throw new Error("no workerd process found below this Node process");
const rss = []; // { t (s), kib }
const sampleRss = (t) => rss.push({ t, kib: pids.reduce((sum, pid) => sum + (rssKiB(pid) || 0), 0) });

// ------------------------------------------------------------------ load ---

const CLIENT_TIMEOUT_MS = 15_000;
// client.mjs: the keep-alive connections, a record of every socket, and one
// resend of a request whose reused socket workerd closed under it.
const client = soakClient({ base, connections: args.connections, timeoutMs: CLIENT_TIMEOUT_MS, retries: args.retries });
const ADMIN = { authorization: `Bearer ${STATS_TOKEN}` };
const send = (path) => client.send(path, { "accept-encoding": "identity", ...(path.startsWith("/__edgeshed/") ? ADMIN : {}) });

const RETRY_AFTER = String(CONFIG.retryAfterSeconds);
/** The answer's kind ("200", "200 degraded", "503 origin:users", ...) or a violation string. */
function classify(route, r) {
  if (r.error) return { violation: `client error: ${r.error}` };
  const text = r.body.toString("utf8");
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const bad = (why) => ({ violation: `${route} ${r.status}: ${why}: ${text.slice(0, 200)}` });
  switch (r.status) {
    case 200:
      if (route === "files") {
        if (r.body.length !== FILE_BYTES) return bad(`proxied body of ${r.body.length} bytes, not ${FILE_BYTES}`);
        return { kind: "200" };
      }
      if (json?.results?.users?.origin !== "users") return bad("no users result");
      if (json.degraded.length === 0 && json.results.recs?.origin === "recs") return { kind: "200" };
      if (json.degraded.length === 1 && json.degraded[0] === "recs" && !("recs" in json.results)) {
        return { kind: "200 degraded" };
      }
      return bad("unexpected results/degraded");
    case 502:
      if (json?.error !== "bad_gateway") return bad("not bad_gateway");
      return { kind: `502 ${json.origin}${json.status ? ` status ${json.status}` : ""}${json.reason ? ` ${json.reason}` : ""}` };
    case 503:
      if (json?.error !== "overloaded" || !json.scope) return bad("not overloaded");
      if (r.headers["retry-after"] !== RETRY_AFTER) return bad(`Retry-After ${r.headers["retry-after"]}`);
      return { kind: `503 ${json.scope}` };
    case 504:
      if (json?.error === "deadline") return { kind: "504 deadline" };
      if (json?.error === "timeout" && json.origin) return { kind: `504 timeout ${json.origin}` };
      return bad("not deadline/timeout");
    default:
      return bad("status outside the contract");
  }
}

const rate = args.factor * (CAPACITY.aggregate + CAPACITY.files); // offered req/s
const counts = { total: 0, byStatus: {}, byKind: {}, byRoute: { aggregate: {}, files: {} } };
const violations = [];
const violationKinds = {};
let violationCount = 0;
let issued = 0;
let stopping = false;
const startedAt = performance.now();
const elapsed = () => (performance.now() - startedAt) / 1000;
let paceBase = startedAt;
let paceIssued = 0;
const windows = []; // per 10 s: { from, to, requests, byStatus, rss: {min,max,first,last} }
let window = { from: 0, requests: 0, byStatus: {} };

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
async function pace() {
  const k = paceIssued++;
  const slot = paceBase + (k * 1000) / rate;
  const now = performance.now();
  if (slot > now) await sleep(slot - now);
  else if (now - slot > 1000) {
    // Far behind the pace (the worker is the bottleneck): do not build up a burst.
    paceBase = now;
    paceIssued = 0;
  }
}

async function connection() {
  while (!stopping) {
    await pace();
    if (stopping || issued >= args.requests) break;
    const n = issued++;
    // 2/3 fan-out, 1/3 proxy, interleaved.
    const route = n % 3 === 2 ? "files" : "aggregate";
    const path = route === "files" ? `/files/f/${n % 1000}` : "/aggregate";
    const sentAt = elapsed();
    const r = await send(path);
    const c = classify(route, r);
    if (c.violation) c.violation += ` (${path}, sent at ${sentAt.toFixed(2)} s)`;
    counts.total++;
    window.requests++;
    const status = r.status ?? "error";
    counts.byStatus[status] = (counts.byStatus[status] ?? 0) + 1;
    window.byStatus[status] = (window.byStatus[status] ?? 0) + 1;
    if (c.violation) {
      violationCount++;
      const key = c.violation.replace(/\d+/g, "N").slice(0, 120);
      violationKinds[key] = (violationKinds[key] ?? 0) + 1;
      if (violations.length < 20) violations.push(`at ${elapsed().toFixed(2)} s: ${c.violation}`);
    } else {
      counts.byKind[c.kind] = (counts.byKind[c.kind] ?? 0) + 1;
      counts.byRoute[route][c.kind] = (counts.byRoute[route][c.kind] ?? 0) + 1;
    }
    if (counts.total >= args.requests) stopping = true;
  }
}

const kib = (k) => `${(k / 1024).toFixed(1)} MiB`;
function closeWindow(to) {
  const samples = rss.filter((s) => s.t >= window.from && s.t < to + 0.001);
  const values = samples.map((s) => s.kib);
  const w = {
    from: window.from,
    to,
    requests: window.requests,
    byStatus: window.byStatus,
    rss: values.length
      ? { min: Math.min(...values), max: Math.max(...values), first: values[0], last: values.at(-1) }
      : null,
    occupancy,
  };
  occupancy = {};
  windows.push(w);
  const statuses = Object.entries(w.byStatus)
    .map(([s, n]) => `${s}:${n}`)
    .join(" ");
  const r = w.rss;
  console.log(
    `  ${String(Math.round(w.from)).padStart(4)}-${String(Math.round(to)).padStart(4)} s  ${String(w.requests).padStart(6)} req ` +
      `(${Math.round(w.requests / Math.max(0.001, to - w.from))}/s)  ${statuses}` +
      (r ? `  RSS min ${kib(r.min)} max ${kib(r.max)} first ${kib(r.first)} last ${kib(r.last)}` : "") +
      `  busy ${Object.entries(w.occupancy).map(([k, v]) => `${k}:${v}`).join(" ")}`,
  );
  window = { from: to, requests: 0, byStatus: {} };
}

console.log(
  `soak: workerd pid ${pids.join(",")}, origins users:${ports.users} recs:${ports.recs} files:${ports.files}; ` +
    `offering ${rate} req/s (${args.factor}x capacity ${CAPACITY.aggregate + CAPACITY.files}/s) over ${args.connections} connections; ` +
    `stop at ${args.requests === Infinity ? "-" : args.requests} requests or ${args.seconds} s`,
);
sampleRss(0);
// Limiter occupancy, sampled with the RSS (the stats route bypasses the
// global limiter): the per-window max of inFlight + queued per scope.
let occupancy = {};
let statsPending = false;
function sampleStats() {
  if (statsPending) return;
  statsPending = true;
  send("/__edgeshed/stats")
    .then((r) => {
      if (r.status !== 200) return;
      const s = JSON.parse(r.body.toString("utf8"));
      for (const [name, scope] of Object.entries({ global: s.global, ...s.origins })) {
        occupancy[name] = Math.max(occupancy[name] ?? 0, scope.inFlight + scope.queued);
      }
    })
    .finally(() => (statsPending = false));
}
const sampler = setInterval(() => {
  const t = elapsed();
  sampleRss(t);
  sampleStats();
  if (t - window.from >= 10 - 0.05) closeWindow(t);
  if (t >= args.seconds) stopping = true;
}, 1000);

await Promise.all(Array.from({ length: args.connections }, connection));
const loadSeconds = elapsed();
clearInterval(sampler);
sampleRss(loadSeconds);
if (window.requests > 0) closeWindow(loadSeconds);

// ----------------------------------------------------------------- after ---

async function stats() {
  const r = await send("/__edgeshed/stats");
  if (r.error || r.status !== 200) throw new Error(`stats: ${r.error ?? r.status}`);
  return JSON.parse(r.body.toString("utf8"));
}
let finalStats = await stats();
// A request workerd cancels as hung leaves its task (and permits) behind
// until the worker reclaims it, twice its longest legitimate request time
// after it started (`reclaim_expired` in crates/edgeshed-wasm/src/task/executor.rs); wait that long before calling permits
// lost. Longest request here: global queue 50 ms + users queue 20 ms +
// timeoutMs 1000 + 5 s slack = 6.07 s, so 12.14 s.
const RECLAIM_MS = 2 * (50 + 20 + 1000 + 5000) + 1000;
const settleStart = Date.now();
while (!idle(finalStats) && Date.now() - settleStart < RECLAIM_MS) {
  await sleep(50);
  finalStats = await stats();
}
const settledMs = Date.now() - settleStart;
sampleRss(elapsed());
// The worker's own view of its tasks: still running (only the metrics
// request itself should be), reclaimed, lost to an exception, steps skipped
// in a foreign request's turn, proxied bodies holding permits.
const taskMetrics = await send("/__edgeshed/metrics").then((r) => {
  const found = {};
  if (r.error || r.status !== 200) return { error: r.error ?? r.status };
  for (const line of r.body.toString("utf8").split("\n")) {
    const m = /^edgeshed_(live_tasks|reclaimed_tasks_total|lost_tasks_total|foreign_steps_total|held_bodies) (\d+)$/.exec(line);
    if (m) found[m[1]] = Number(m[2]);
  }
  return found;
});
const origins = await originStats();

const after = [];
for (let i = 0; i < 5; i++) {
  for (const [route, path] of [
    ["aggregate", "/aggregate"],
    ["files", "/files/after"],
  ]) {
    const r = await send(path);
    after.push({ route, status: r.status ?? r.error, ...classify(route, r) });
  }
}
await sleep(1000);
sampleRss(elapsed());
await new Promise((resolve) => setTimeout(resolve, 200)); // let the log streams flush
client.destroy();
await mf.dispose();
// The origins exit when the channel closes; wait for it, so that the soak
// leaves no process behind.
const originsExited = new Promise((resolve) => (originsChild.exitCode === null ? originsChild.once("exit", resolve) : resolve()));
originsChild.disconnect();
await originsExited;

// ---------------------------------------------------------------- checks ---

const failures = [];
if (violationCount > 0) {
  failures.push(
    `${violationCount} answers outside the contract: ${JSON.stringify(violationKinds)}; first ones:\n      ${violations.slice(0, 5).join("\n      ")}`,
  );
}
// Connections (client.mjs). A resend is the keep-alive race only: a reused
// socket, idle 2.5 s or more, reset before any byte of the answer. More than
// retryCap of them fails the soak: each needs a socket workerd closed while
// idle, and runs see far fewer (RELIABILITY.md).
const connectionReport = client.report();
const retryCap = Math.max(args.connections, Math.ceil(counts.total / 1000));
if (connectionReport.retries > retryCap) {
  failures.push(`${connectionReport.retries} requests resent after a reset of a reused socket (cap ${retryCap})`);
}
const scopes = { global: finalStats.global, ...finalStats.origins };
for (const [name, s] of Object.entries(scopes)) {
  if (s.inFlight !== 0 || s.queued !== 0) failures.push(`${name}: inFlight ${s.inFlight}, queued ${s.queued} after ${settledMs} ms`);
}
// Every routed answer went through the global limiter: admitted, shed, timed
// out in its queue, or (not in the stats) expired at the route's deadline.
const g = finalStats.global;
const counted = g.admitted + g.shed + g.queueTimeouts;
const deadline504 = counts.byKind["504 deadline"] ?? 0;
if (counted > counts.total || counts.total - counted > deadline504) {
  failures.push(`global counters (${counted}) do not account for the ${counts.total} answers`);
}
if (taskMetrics.error) failures.push(`metrics: ${taskMetrics.error}`);
else if (taskMetrics.lost_tasks_total !== 0 || taskMetrics.live_tasks !== 1 || taskMetrics.held_bodies !== 0) {
  failures.push(`tasks left behind: ${JSON.stringify(taskMetrics)}`);
}
if (trapLines.length > 0) failures.push(`${trapLines.length} trap/hang lines in the log, e.g.:\n      ${trapLines.slice(0, 5).join("\n      ")}`);
for (const [name, o] of Object.entries(origins)) {
  const limit = CONFIG.origins[name].maxInFlight;
  if (o.peakActive > limit) failures.push(`origin ${name} saw ${o.peakActive} requests at once (limit ${limit})`);
}
// workerd's heap grows under this load for tens of seconds before it levels
// off (a plain-JS worker does the same: --worker plain), so growth is judged
// on long runs only: the last quarter of the samples against the second.
const RSS_CAP_KIB = 1024 * 1024;
const quarter = Math.floor(rss.length / 4);
const maxOf = (samples) => Math.max(...samples.map((s) => s.kib));
const peak = maxOf(rss);
const second = quarter > 0 ? maxOf(rss.slice(quarter, 2 * quarter)) : NaN;
const last = quarter > 0 ? maxOf(rss.slice(-quarter)) : NaN;
const rssBound = second * 1.25 + 64 * 1024;
const judgeGrowth = loadSeconds >= 60;
if (!(peak < RSS_CAP_KIB)) failures.push(`RSS peak ${kib(peak)} >= ${kib(RSS_CAP_KIB)}`);
if (judgeGrowth && !(last <= rssBound)) {
  failures.push(`RSS still growing: last-quarter max ${kib(last)} > 1.25 x second-quarter max ${kib(second)} + 64 MiB`);
}
const afterBad = after.filter((a) => a.violation);
const afterOk = (route) => after.filter((a) => a.route === route && a.status === 200).length;
if (afterBad.length > 0 || afterOk("aggregate") < 4 || afterOk("files") < 4) {
  failures.push(`requests after the soak: ${JSON.stringify(after.map((a) => `${a.route} ${a.status}`))}`);
}

// --------------------------------------------------------------- report ---

const fmt = (o) =>
  Object.entries(o)
    .sort(([, a], [, b]) => b - a)
    .map(([k, n]) => `${k}: ${n}`)
    .join(", ");
console.log(`\nsoak: ${counts.total} answers in ${loadSeconds.toFixed(1)} s (${Math.round(counts.total / loadSeconds)}/s; offered ${rate}/s = ${args.factor}x capacity)`);
console.log(`  statuses: ${fmt(counts.byStatus)}`);
console.log(`  /aggregate: ${fmt(counts.byRoute.aggregate)}`);
console.log(`  /files/:    ${fmt(counts.byRoute.files)}`);
console.log(`  final stats (settled in ${settledMs} ms): ${JSON.stringify(finalStats)}`);
console.log(`  global admitted + shed + queueTimeouts: ${counted} for ${counts.total} answers (${deadline504} of them 504 deadline)`);
console.log(`  origins: ${JSON.stringify(origins)}`);
console.log(`  tasks: ${JSON.stringify(taskMetrics)}`);
console.log(
  `  workerd RSS: first ${kib(rss[0].kib)}, peak ${kib(peak)}, last ${kib(rss.at(-1).kib)}; ` +
    `second-quarter max ${kib(second)}, last-quarter max ${kib(last)}` +
    (judgeGrowth ? ` (bound ${kib(rssBound)})` : " (growth judged on runs of 60 s or more; cap 1 GiB)"),
);
console.log(`  log: ${logLines.length} lines, ${trapLines.length} trap/hang lines`);
{
  const c = connectionReport;
  console.log(
    `  connections: ${c.attempts} requests written, ${c.freshSockets} on fresh sockets, ${c.reusedSockets} on reused ones ` +
      `(idle before reuse ${JSON.stringify(c.reusedIdle)}, max ${c.maxReusedIdleMs} ms); ` +
      `idle sockets closed by workerd ${JSON.stringify(c.serverClosedIdle)}`,
  );
  console.log(
    `  resent after a reset of a reused socket before any byte: ${c.retries} (cap ${retryCap})` +
      (c.retries ? `, those sockets idle ${Math.min(...c.retriedIdleMs)}-${Math.max(...c.retriedIdleMs)} ms` : "") +
      `; other connection failures: ${c.otherFailures.length}` +
      (c.otherFailures.length ? ` ${JSON.stringify(c.otherFailures.slice(0, 5).map(({ at, ...f }) => ({ at: +(at / 1000 - startedAt / 1000).toFixed(2), ...f })))}` : ""),
  );
}
console.log(`  after: ${after.map((a) => `${a.route} ${a.status}`).join(", ")}`);

mkdirSync(join(args.log, ".."), { recursive: true });
writeFileSync(args.log, logLines.join("\n") + "\n");
if (args.json) {
  writeFileSync(
    args.json,
    JSON.stringify(
      { args, rate, loadSeconds, counts, violations, violationKinds, finalStats, taskMetrics, origins, connections: connectionReport, rss, windows, trapLines, after, failures },
      null,
      2,
    ),
  );
}
if (failures.length > 0) {
  console.log(`\nsoak: FAILED\n  - ${failures.join("\n  - ")}`);
  process.exit(1);
}
console.log("\nsoak: OK (contract statuses only, every permit back, no traps, RSS bounded)");
process.exit(0);
