// Where the gateway isolate spends its CPU under overload: a V8 CPU profile
// of the edgeshed worker (through Miniflare's inspector) while autocannon
// drives it closed-loop, almost every answer a shed 503 (the setup of
// cpu.mjs: origins a and b at 4 at once, 50 ms, maxInFlight 4, no queue).
// Prints the functions with the most self time, and the share of wasm,
// the worker's JS and workerd's built-ins.
//
//   node benches/e2e/profile.mjs                 # 8,000 requests
//   node benches/e2e/profile.mjs --out p.cpuprofile --top 40
//   node benches/e2e/profile.mjs --floor         # the floor worker (503 at once), for scale
//   node benches/e2e/profile.mjs --dist DIR      # another build of dist/worker
//   node benches/e2e/profile.mjs --adaptive gradient2   # adaptive origin limits instead of 4
//   node benches/e2e/profile.mjs --proxied       # cpu.mjs's proxied case: a prefix route with room for
//       every request (origin p, 64 at once in 1 ms, 16 connections); with --floor, the plain JS proxy
//
// Needs dist/worker (scripts/build-worker.sh). The profile file opens in
// Chrome DevTools (Performance → load profile).
import { cpSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import WebSocket from "ws";
import { ROOT, startWorkerd } from "../support/workerd.mjs";
import { startOrigins } from "./lib/origins.mjs";

const args = process.argv.slice(2);
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const REQUESTS = Number(opt("--requests", 8000));
const TOP = Number(opt("--top", 25));
const OUT = opt("--out", null);
const PORT = 9300 + Math.floor(Math.random() * 500);
const FLOOR = args.includes("--floor");
const DIST = opt("--dist", null);
const ADAPTIVE = opt("--adaptive", null);
const FLOOR_SCRIPT = `export default { fetch() { return new Response('{"error":"overloaded"}', { status: 503, headers: { "retry-after": "1" } }); } };`;

const PROXIED = args.includes("--proxied");
const origins = PROXIED
  ? await startOrigins({ names: ["p"], concurrency: 64, latencyMs: 1 })
  : await startOrigins({ names: ["a", "b"], concurrency: 4, latencyMs: 50 });
const limit = ADAPTIVE ? { adaptive: { algorithm: ADAPTIVE } } : { maxInFlight: PROXIED ? 64 : 4 };
const origin = (name) => ({ url: origins.url(name), ...limit, maxQueue: 0, timeoutMs: 30_000 });
const config = PROXIED
  ? { origins: { p: origin("p") }, routes: [{ prefix: "/proxy/", origin: "p" }] }
  : {
      retryAfterSeconds: 1,
      origins: { a: origin("a"), b: origin("b") },
      routes: [{ path: "/aggregate", fanout: [{ origin: "a", path: "/a", required: true }, { origin: "b", path: "/b", required: true }] }],
    };
const PATH = PROXIED ? "/proxy/x" : "/aggregate";
const CONNECTIONS = PROXIED ? 16 : 32;
const PLAIN_PROXY = `export default { fetch(request, env) {
  const url = new URL(request.url);
  return fetch(env.ORIGIN + url.pathname.slice("/proxy".length) + url.search, { method: request.method, headers: request.headers });
} };`;
/** A scratch root with the worker's entry and `dist` as its dist/worker. */
function rootWith(dist) {
  const root = mkdtempSync(join(tmpdir(), "edgeshed-profile-"));
  cpSync(join(ROOT, "worker"), join(root, "worker"), { recursive: true });
  cpSync(dist, join(root, "dist/worker"), { recursive: true });
  return root;
}
const root = DIST ? rootWith(DIST) : ROOT;
const w = FLOOR
  ? PROXIED
    ? await startWorkerd({ script: PLAIN_PROXY, bindings: { ORIGIN: origins.url("p") }, inspectorPort: PORT })
    : await startWorkerd({ script: FLOOR_SCRIPT, inspectorPort: PORT })
  : await startWorkerd({ scriptPath: join(root, "worker/index.mjs"), modulesRoot: root, bindings: { EDGESHED: config }, inspectorPort: PORT });

/** `amount` requests over CONNECTIONS connections; resolves with the status counts. */
function load(amount) {
  const statuses = {};
  return new Promise((resolve, reject) => {
    const instance = autocannon({ url: new URL(PATH, w.url).href, connections: CONNECTIONS, amount, timeout: 10 }, (error) =>
      error ? reject(error) : resolve(statuses),
    );
    instance.on("response", (_client, status) => (statuses[status] = (statuses[status] ?? 0) + 1));
  });
}

/** A DevTools-protocol session on the first inspectable worker. */
async function inspector() {
  const targets = await (await fetch(`http://127.0.0.1:${PORT}/json`)).json();
  const ws = new WebSocket(targets[0].webSocketDebuggerUrl);
  await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
  let id = 0;
  const pending = new Map();
  ws.on("message", (data) => {
    const m = JSON.parse(data);
    if (m.id && pending.has(m.id)) {
      pending.get(m.id)(m);
      pending.delete(m.id);
    }
  });
  return {
    send: (method, params = {}) =>
      new Promise((resolve) => {
        pending.set(++id, resolve);
        ws.send(JSON.stringify({ id, method, params }));
      }),
    close: () => ws.close(),
  };
}

/** Self time per function (ms) and per kind, from a V8 profile. */
function summarizeProfile(profile) {
  const self = new Map();
  const dt = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const node = profile.samples[i];
    dt.set(node, (dt.get(node) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  }
  const kinds = { wasm: 0, worker: 0, idle: 0, other: 0 };
  for (const node of profile.nodes) {
    const ms = dt.get(node.id) ?? 0;
    if (ms === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const key = `${functionName || "(anonymous)"} ${url ? `${url.split("/").pop()}:${lineNumber + 1}` : ""}`.trim();
    self.set(key, (self.get(key) ?? 0) + ms);
    if (functionName === "(idle)" || functionName === "(program)") kinds.idle += ms;
    else if (url.includes("wasm") || /^\$?(wasm-function|edgeshed)/.test(functionName)) kinds.wasm += ms;
    else if (url.includes("edgeshed") || url.includes("index.mjs") || url.includes("glue")) kinds.worker += ms;
    else kinds.other += ms;
  }
  return { self: [...self].sort((a, b) => b[1] - a[1]), kinds };
}

try {
  await load(1000); // warm-up: tier-up before the profile
  const session = await inspector();
  await session.send("Profiler.enable");
  await session.send("Profiler.setSamplingInterval", { interval: 100 });
  await session.send("Profiler.start");
  const started = performance.now();
  const statuses = await load(REQUESTS);
  const elapsed = performance.now() - started;
  const { result } = await session.send("Profiler.stop");
  session.close();
  if (OUT) writeFileSync(OUT, JSON.stringify(result.profile));
  const { self, kinds } = summarizeProfile(result.profile);
  const total = self.reduce((n, [, ms]) => n + ms, 0);
  const responses = Object.values(statuses).reduce((a, b) => a + b, 0);
  console.log(`${responses} responses in ${elapsed.toFixed(0)} ms, statuses ${JSON.stringify(statuses)}; profile ${total.toFixed(0)} ms`);
  const busy = total - kinds.idle;
  console.log(
    `busy ${busy.toFixed(0)} ms = ${((busy / responses) * 1000).toFixed(0)} µs per response: wasm ${kinds.wasm.toFixed(0)}, worker JS ${kinds.worker.toFixed(0)}, other ${kinds.other.toFixed(0)} (idle/program ${kinds.idle.toFixed(0)})`,
  );
  for (const [key, ms] of self.slice(0, TOP)) console.log(`${ms.toFixed(1).padStart(8)} ms ${((ms / busy) * 100).toFixed(1).padStart(5)} %  ${key}`);
} finally {
  await w.mf.dispose();
  origins.close();
}
