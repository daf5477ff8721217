// edgeshed's npm `Limiter` (wasm, through pkg/node.js) vs p-limit, p-queue 10,
// the fast queues of fast-peers.mjs and cockatiel's bulkhead (when installed, see peers.mjs) and vs tower 0.5
// on wasm (benches/tower-wasm, when built), in one Node.js process: per-task
// overhead uncontended, contended and on the shed path, and memory per
// queued waiter. Ratios are medians of per-round ratios.
//
//   node --expose-gc benches/node/limiter.bench.mjs            # full (~20 s)
//   node --expose-gc benches/node/limiter.bench.mjs --quick    # smoke (~2 s)
//   node --expose-gc benches/node/limiter.bench.mjs --only edgeshed
//   node --expose-gc benches/node/limiter.bench.mjs --json out.json
//   BENCH_PEERS=/tmp/peers node --expose-gc ...   # p-queue/cockatiel from there
//   node --expose-gc benches/node/limiter.bench.mjs --before DIR   # also DIR/pkg of an
//       older build, in the same rounds ("edgeshed before"; node benches/run-all.mjs --before REF)
//
// Harness as in benches/core/: every case runs once as warm-up, then for
// several rounds of a fixed op count; within a round the cases of a group run
// back to back in an order rotated every round, with a full GC before each
// (so one case's garbage is not collected on another's time). ns/op is the
// median over the rounds of on-CPU time of the main thread: wall-clock minus
// its run-queue wait (/proc/thread-self/schedstat), so that preemption by
// other processes on this 2-core machine is not counted. Work that V8 does
// on its helper threads (concurrent marking) is not counted either; GC pauses
// on the main thread are. Results: BENCHMARKS.md; the cases in detail:
// docs/benchmarks-log-2026.md.

import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { Limiter } from "../../pkg/node.js";
import pLimit from "p-limit";
import { assert, deferred, makeGroup, median } from "./harness.mjs";
import { memory } from "./memory.mjs";
import { loadBefore, loadCockatiel, loadPQueue, shedWhen } from "./peers.mjs";
import { FAST_PEERS } from "./fast-peers.mjs";

// p-queue 9 and cockatiel's bulkhead (see peers.mjs for where they load from).
const pq = await loadPQueue();
const ck = await loadCockatiel();
/** `[case]` when p-queue / cockatiel is installed, else `[]`. */
const ifPQueue = (c) => (pq ? [c] : []);
const ifCockatiel = (c) => (ck ? [c] : []);

// The third peer, tower 0.5's ConcurrencyLimit/LoadShed on wasm
// (benches/tower-wasm), when it has been built.
const TOWER_PKG = new URL("../tower-wasm/pkg/", import.meta.url);
let tower = null;
let towerWasm = null;
if (existsSync(new URL("tower_bg.wasm", TOWER_PKG))) {
  tower = await import(new URL("tower.js", TOWER_PKG).href);
  towerWasm = tower.initSync({ module: readFileSync(new URL("tower_bg.wasm", TOWER_PKG)) });
}
/** `[case]` when the tower peer is built, else `[]`. */
const ifTower = (c) => (tower ? [c] : []);

const args = process.argv.slice(2);
// An older build's Limiter, measured beside this one: every edgeshed case
// runs once per edition ("edgeshed" and "edgeshed before").
const Before = await loadBefore(args.includes("--before") ? args[args.indexOf("--before") + 1] : null);
const editions = (make) => [make(Limiter, "edgeshed"), ...(Before ? [make(Before, "edgeshed before")] : [])];
const QUICK = args.includes("--quick");
const ONLY = args.includes("--only") ? args[args.indexOf("--only") + 1] : null;
const JSON_OUT = args.includes("--json") ? args[args.indexOf("--json") + 1] : null;
if (typeof globalThis.gc !== "function") {
  console.error("run with node --expose-gc");
  process.exit(2);
}

const ROUNDS = QUICK ? 3 : 7;
const UNCONTENDED_OPS = QUICK ? 20_000 : 200_000;
const QUEUED = 100_000; // tasks submitted at once in the contended case
const CONTENDED_BATCHES = QUICK ? 1 : 2;
const SHED_OPS = QUICK ? 20_000 : 200_000;
const LIMIT = 8;
const WAITERS = 10_000;
const QUEUE_TIMEOUT_MS = 600_000; // never fires within a run
const group = makeGroup({ rounds: ROUNDS, only: ONLY });

// The task of the uncontended and shed cases: it returns a settled promise
// (one made once, so no case pays for its allocation), as an async task
// would; @henrygd/queue calls .then on whatever a task returns.
const RESOLVED = Promise.resolve(1);
const work = () => RESOLVED;

// ---------------------------------------------------- 1. uncontended ---

async function uncontended() {
  const pl = pLimit(1_000_000);
  const loop = (call) => async () => {
    let sum = 0;
    for (let i = 0; i < UNCONTENDED_OPS; i++) sum += await call();
    return sum;
  };
  const check = (sum) => assert(sum === UNCONTENDED_OPS, `all ${UNCONTENDED_OPS} calls returned`);
  return group("1. uncontended: `await limiter(fn)` one at a time, limit 1,000,000", [
    { label: "baseline (await fn() wrapped in a promise)", ops: UNCONTENDED_OPS, run: loop(() => Promise.resolve(work())), check },
    ...FAST_PEERS.map((p) => ({
      label: p.name,
      ops: UNCONTENDED_OPS,
      setup: () => p.make(1_000_000),
      run: (q) => loop(() => q.run(work))(),
      check,
    })),
    ...editions((L, name) => ({
      label: `${name} Limiter.run`,
      ops: UNCONTENDED_OPS,
      setup: () => new L({ maxInFlight: 1_000_000 }),
      run: (es) => loop(() => es.run(work))(),
      check,
    })),
    { label: "p-limit", ops: UNCONTENDED_OPS, run: loop(() => pl(work)), check },
    ...ifPQueue({
      label: "p-queue",
      ops: UNCONTENDED_OPS,
      setup: () => new pq.PQueue({ concurrency: 1_000_000 }),
      run: (q) => loop(() => q.add(work))(),
      check,
    }),
    ...ifCockatiel({
      label: "cockatiel bulkhead",
      ops: UNCONTENDED_OPS,
      setup: () => ck.bulkhead(1_000_000, 0),
      run: (b) => loop(() => b.execute(work))(),
      check,
    }),
    ...ifTower({
      label: "tower ConcurrencyLimit (wasm)",
      ops: UNCONTENDED_OPS,
      setup: () => new tower.TowerLimiter(1_000_000, false),
      run: (l) => loop(() => l.run(work))(),
      check,
    }),
  ]);
}

// ------------------------------------------------------ 2. contended ---

/** A task that holds its slot across a microtask turn and tracks concurrency. */
function tracker() {
  const t = { now: 0, peak: 0 };
  t.task = async () => {
    t.now++;
    if (t.now > t.peak) t.peak = t.now;
    await null;
    t.now--;
    return 1;
  };
  return t;
}

async function contended() {
  const batch = (submit) => async () => {
    let sum = 0;
    for (let b = 0; b < CONTENDED_BATCHES; b++) {
      const promises = new Array(QUEUED);
      for (let i = 0; i < QUEUED; i++) promises[i] = submit();
      for (const v of await Promise.all(promises)) sum += v;
    }
    return sum;
  };
  const ops = QUEUED * CONTENDED_BATCHES;
  const esLimiter = (L = Limiter) => new L({ maxInFlight: LIMIT, maxQueue: QUEUED, queueTimeoutMs: QUEUE_TIMEOUT_MS });

  // Untimed check: both peak at exactly LIMIT and complete every task.
  for (const [name, make] of [
    ["edgeshed", () => { const l = esLimiter(); return (fn) => l.run(fn); }],
    ["p-limit", () => pLimit(LIMIT)],
    ...FAST_PEERS.map((p) => [p.name, () => p.make(LIMIT).run]),
    ...ifPQueue(["p-queue", () => { const q = new pq.PQueue({ concurrency: LIMIT }); return (fn) => q.add(fn); }]),
    ...ifCockatiel(["cockatiel", () => { const b = ck.bulkhead(LIMIT, QUEUED); return (fn) => b.execute(fn); }]),
    ...ifTower(["tower", () => { const l = new tower.TowerLimiter(LIMIT, false); return (fn) => l.run(fn); }]),
  ]) {
    const t = tracker();
    const limit = make();
    const results = await Promise.all(Array.from({ length: QUEUED }, () => limit(t.task)));
    assert(results.length === QUEUED && results.every((v) => v === 1), `${name}: all tasks completed`);
    assert(t.peak === LIMIT, `${name}: peak concurrency ${t.peak} must be ${LIMIT}`);
  }
  console.log(`\n(check: every library peaks at exactly ${LIMIT} in flight over ${QUEUED} tasks)`);

  const check = (sum) => assert(sum === ops, `all ${ops} tasks returned`);
  const t = tracker();
  return group(`2. contended: limit ${LIMIT}, ${QUEUED.toLocaleString("en")} tasks submitted at once (× ${CONTENDED_BATCHES}), each yields once`, [
    { label: "baseline (no limiter)", ops, run: batch(() => t.task()), check },
    ...editions((L, name) => ({
      label: `${name} Limiter.run (maxQueue ${QUEUED})`,
      ops,
      setup: () => esLimiter(L),
      run: (l) => batch(() => l.run(t.task))(),
      check,
    })),
    { label: "p-limit", ops, setup: () => pLimit(LIMIT), run: (l) => batch(() => l(t.task))(), check },
    ...FAST_PEERS.map((p) => ({ label: p.name, ops, setup: () => p.make(LIMIT), run: (q) => batch(() => q.run(t.task))(), check })),
    ...ifPQueue({
      label: "p-queue (unbounded)",
      ops,
      setup: () => new pq.PQueue({ concurrency: LIMIT }),
      run: (q) => batch(() => q.add(t.task))(),
      check,
    }),
    ...ifPQueue({
      label: "p-queue (timeout 600000 per task)",
      ops,
      setup: () => new pq.PQueue({ concurrency: LIMIT, timeout: QUEUE_TIMEOUT_MS }),
      run: (q) => batch(() => q.add(t.task))(),
      check,
    }),
    ...ifCockatiel({
      label: `cockatiel bulkhead(8, ${QUEUED})`,
      ops,
      setup: () => ck.bulkhead(LIMIT, QUEUED),
      run: (b) => batch(() => b.execute(t.task))(),
      check,
    }),
    ...ifTower({
      label: "tower ConcurrencyLimit (wasm, unbounded)",
      ops,
      setup: () => new tower.TowerLimiter(LIMIT, false),
      run: (l) => batch(() => l.run(t.task))(),
      check,
    }),
  ]);
}

// ------------------------------------------------------- 3. overload ---

async function overload() {
  const loop = (call) => async () => {
    let shed = 0;
    for (let i = 0; i < SHED_OPS; i++) {
      try {
        await call();
      } catch (error) {
        if (error.status === 503 || (ck && error instanceof ck.BulkheadRejectedError)) shed++;
        else throw error;
      }
    }
    return shed;
  };
  const check = (shed) => assert(shed === SHED_OPS, `all ${SHED_OPS} calls shed`);
  // p-limit and p-queue have no shed policy: the usual pattern is to check
  // their counters and reject with an error of one's own (same name/status
  // as edgeshed's). cockatiel's bulkhead(1, 0) rejects by itself with its
  // BulkheadRejectedError (an Error subclass, with a stack trace).
  const shedWith = (limit, max) => shedWhen(() => limit.activeCount + limit.pendingCount, max, limit);
  /** A `{ setup, teardown }` pair that holds the one slot of `make()` with a pending task. */
  const holding = (make, submit, extra = (x) => x) => ({
    setup: () => {
      const l = make();
      const held = deferred();
      const holder = submit(l, () => held.promise);
      return extra({ l, held, holder });
    },
    teardown: async ({ held, holder }) => {
      held.resolve(0);
      await holder;
    },
  });
  return group("3. overload: limit 1 held for the whole run, every call is shed (rejected 503)", [
    {
      label: "baseline (Promise.reject(new Error))",
      ops: SHED_OPS,
      run: loop(() => {
        const error = new Error("service overloaded");
        error.status = 503;
        return Promise.reject(error);
      }),
      check,
    },
    ...editions((L, name) => ({
      label: `${name} Limiter.run (maxQueue 0)`,
      ops: SHED_OPS,
      setup: () => {
        const l = new L({ maxInFlight: 1 });
        const held = deferred();
        const holder = l.run(() => held.promise);
        return { l, held, holder };
      },
      run: ({ l }) => loop(() => l.run(work))(),
      check: (shed, { l }) => {
        check(shed);
        assert(l.stats().shed === SHED_OPS, "edgeshed counted every shed");
      },
      teardown: async ({ held, holder }) => {
        held.resolve(0);
        await holder;
      },
    })),
    {
      label: "p-limit + activeCount check",
      ops: SHED_OPS,
      setup: () => {
        const l = pLimit(1);
        const held = deferred();
        const holder = l(() => held.promise);
        return { l, held, holder, shed: shedWith(l, 1) };
      },
      run: ({ shed }) => loop(() => shed(work))(),
      check,
      teardown: async ({ held, holder }) => {
        held.resolve(0);
        await holder;
      },
    },
    ...FAST_PEERS.map((p) => ({
      label: `${p.name} + user-side check`,
      ops: SHED_OPS,
      ...holding(() => p.make(1), (q, fn) => q.run(fn)),
      run: ({ l }) => loop(() => l.shed(work))(),
      check,
    })),
    ...ifPQueue({
      label: "p-queue + size/pending check",
      ops: SHED_OPS,
      ...holding(
        () => new pq.PQueue({ concurrency: 1 }),
        (q, fn) => q.add(fn),
        (s) => ({ ...s, shed: shedWhen(() => s.l.size + s.l.pending, 1, (fn) => s.l.add(fn)) }),
      ),
      run: ({ shed }) => loop(() => shed(work))(),
      check,
    }),
    ...ifCockatiel({
      label: "cockatiel bulkhead(1, 0)",
      ops: SHED_OPS,
      ...holding(() => ck.bulkhead(1, 0), (b, fn) => b.execute(fn)),
      run: ({ l }) => loop(() => l.execute(work))(),
      check,
    }),
    ...ifTower({
      label: "tower LoadShed+ConcurrencyLimit (wasm)",
      ops: SHED_OPS,
      setup: () => {
        const l = new tower.TowerLimiter(1, true);
        const held = deferred();
        const holder = l.run(() => held.promise);
        return { l, held, holder };
      },
      run: ({ l }) => loop(() => l.run(work))(),
      check,
      teardown: async ({ held, holder }) => {
        held.resolve(0);
        await holder;
      },
    }),
  ]);
}

// ------------------------------------------------------------- main ---

console.log(
  `edgeshed Limiter (pkg/, wasm) vs p-limit ${JSON.parse(readFileSync(new URL("../../node_modules/p-limit/package.json", import.meta.url))).version}` +
    (pq ? `, p-queue ${pq.version}` : "") +
    (ck ? `, cockatiel ${ck.version}` : "") +
    FAST_PEERS.map((p) => `, ${p.name} ${p.version}`).join("") +
    ` — node ${process.version}, ${ROUNDS} rounds${QUICK ? " (--quick)" : ""}, median on-CPU ns/op [min–max], wall-clock median`,
);
const results = { queued: QUEUED };
results.memory = await memory({ pLimit, pq, ck, tower, towerWasm, WAITERS, QUEUE_TIMEOUT_MS, work }); // first, while the wasm instance is fresh
results.uncontended = await uncontended();
results.contended = await contended();
results.overload = await overload();

// Ratios are the median over rounds of the per-round ratio (the two cases of
// a pair ran in the same round, back to back), so a slow round on this shared
// machine moves both sides of one ratio rather than one side of all of them.
const perRound = (g, a, b, f) => {
  if (!g[a] || !g[b]) return NaN;
  return median(g[a].rounds.map((x, i) => f(x, g[b].rounds[i], i)));
};
const ratio = (g, a, b) => perRound(g, a, b, (x, y) => x / y);
const net = (g, a, b, base) => (g[base] ? perRound(g, a, b, (x, y, i) => (x - g[base].rounds[i]) / (y - g[base].rounds[i])) : NaN);
const PATHS = [
  ["uncontended", results.uncontended, "edgeshed Limiter.run", "baseline (await fn() wrapped in a promise)"],
  ["contended", results.contended, `edgeshed Limiter.run (maxQueue ${QUEUED})`, "baseline (no limiter)"],
  ["overload (shed)", results.overload, "edgeshed Limiter.run (maxQueue 0)", "baseline (Promise.reject(new Error))"],
];
// Per peer: the case label on each path and the goal (issue 32: at most the fast queues' time on both
// paths, half of p-limit's and p-queue's, and the shed path half of a user-side refusal; tower's from
// issue 6; none stated for cockatiel).
const PEERS = [
  ...(Before ? [["edgeshed before", ["edgeshed before Limiter.run", `edgeshed before Limiter.run (maxQueue ${QUEUED})`, "edgeshed before Limiter.run (maxQueue 0)"], [1.0, 1.0, 1.0]]] : []),
  ...FAST_PEERS.map((p) => [p.name, [p.name, p.name, `${p.name} + user-side check`], [1.0, 1.0, 0.5]]),
  ["p-limit", ["p-limit", "p-limit", "p-limit + activeCount check"], [0.5, 0.5, 0.5]],
  ...ifPQueue(["p-queue", ["p-queue", "p-queue (unbounded)", "p-queue + size/pending check"], [0.5, 0.5, 0.5]]),
  ...ifPQueue(["p-queue (timeout)", [null, "p-queue (timeout 600000 per task)", null], [null, 0.5, null]]),
  ...ifCockatiel(["cockatiel", ["cockatiel bulkhead", `cockatiel bulkhead(8, ${QUEUED})`, "cockatiel bulkhead(1, 0)"], [null, null, null]]),
  ...ifTower(["tower-on-wasm", ["tower ConcurrencyLimit (wasm)", "tower ConcurrencyLimit (wasm, unbounded)", "tower LoadShed+ConcurrencyLimit (wasm)"], [0.7, 0.7, 0.7]]),
];
results.summary = {};
for (const [peer, labels, goals] of PEERS) {
  console.log(`\n## edgeshed / ${peer} per task, median of per-round ratios`);
  results.summary[peer] = {};
  PATHS.forEach(([path, g, es, base], k) => {
    if (!labels[k]) return;
    const r = ratio(g, es, labels[k]);
    const n = net(g, es, labels[k], base);
    const goal = goals[k];
    const verdict = goal == null ? "" : `goal ≤ ${goal}: ${r <= goal ? "met ✓" : "missed ✗"}`;
    console.log(`  ${path.padEnd(18)} ${r.toFixed(2)}  (net of baseline ${n.toFixed(2)})  ${verdict}`);
    results.summary[peer][path] = { ratio: r, net: n, goal };
  });
}
if (!pq || !ck) console.log(`\n(${[!pq && "p-queue", !ck && "cockatiel"].filter(Boolean).join(", ")} skipped: not installed; see benches/node/peers.mjs)`);
if (!tower) console.log("\n(tower-on-wasm peer skipped: build it with bash benches/tower-wasm/build.sh)");
if (JSON_OUT) writeFileSync(JSON_OUT, JSON.stringify(results, null, 2));
