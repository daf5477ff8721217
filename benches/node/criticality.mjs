// The cost of criticality in the npm `Limiter` (pkg/node.js): a call that
// names its criticality (and a key) against a plain `run`, uncontended and
// contended, and against p-queue 9's `priority` (when installed, see
// peers.mjs), the peer with a priority queue. Harness: harness.mjs (on-CPU
// ns/op, median of rotated rounds; ratios are medians of per-round ratios).
//
//   node --expose-gc benches/node/criticality.mjs            # ~10 s
//   node --expose-gc benches/node/criticality.mjs --quick    # smoke (~2 s)
//   node --expose-gc benches/node/criticality.mjs --json benches/results/node-criticality.json
import { writeFileSync } from "node:fs";
import { Limiter } from "../../pkg/node.js";
import { assert, makeGroup, median } from "./harness.mjs";
import { loadPQueue } from "./peers.mjs";

const QUICK = process.argv.includes("--quick");
const group = makeGroup({ rounds: QUICK ? 3 : 9 });
const pq = await loadPQueue();

const UNCONTENDED = QUICK ? 20_000 : 100_000;
const LIMIT = 8;
const QUEUED = 10_000;
const BATCHES = QUICK ? 1 : 5;
const CRITICALITIES = ["critical", "default", "sheddable"];
// The same options objects every call (as a caller that keeps them per route would).
const CLASSED = CRITICALITIES.map((criticality) => ({ criticality }));
const KEYED = CRITICALITIES.map((criticality, i) => ({ criticality, key: `tenant-${i}` }));
// Contended, one key: several keys would be held to their fair share (429s).
const ONE_KEY = CRITICALITIES.map((criticality) => ({ criticality, key: "tenant" }));

/** Per-round ratio `a / b`, median. */
const ratio = (out, a, b) => median(out[a].rounds.map((x, i) => x / out[b].rounds[i]));

const work = () => 1;
const task = async () => {
  await null;
  return 1;
};
const noReserve = { critical: 0, default: 0 };

const uncontended = (options) => ({
  ops: UNCONTENDED,
  // No reserve, so that every call may take a slot whatever its criticality.
  setup: () => new Limiter({ maxInFlight: 1_000_000, reserve: noReserve }),
  run: async (l) => {
    let sum = 0;
    for (let i = 0; i < UNCONTENDED; i++) sum += await l.run(work, options?.[i % 3]);
    return sum;
  },
  check: (sum) => assert(sum === UNCONTENDED, "every call ran"),
});
const one = await group(`1. uncontended: ${UNCONTENDED.toLocaleString("en")} calls one after another`, [
  { label: "edgeshed run(fn)", ...uncontended(undefined) },
  // An options object without edgeshed keys: the cost of reading one at all.
  { label: "edgeshed run(fn, {})", ...uncontended([{}, {}, {}]) },
  { label: "edgeshed run(fn, { criticality })", ...uncontended(CLASSED) },
  { label: "edgeshed run(fn, { criticality, key })", ...uncontended(KEYED) },
]);

// Contended: LIMIT slots, QUEUED calls submitted at once, of rotating criticality.
const ops = QUEUED * BATCHES;
const contended = (submit, make) => ({
  ops,
  setup: make,
  run: async (limiter) => {
    let sum = 0;
    for (let b = 0; b < BATCHES; b++) {
      const calls = new Array(QUEUED);
      for (let i = 0; i < QUEUED; i++) calls[i] = submit(limiter, i % 3);
      for (const v of await Promise.all(calls)) sum += v;
    }
    return sum;
  },
  check: (sum) => assert(sum === ops, "every call ran"),
});
const queued = (reserve) => () =>
  new Limiter({ maxInFlight: LIMIT, maxQueue: QUEUED, queueTimeoutMs: 600_000, ...(reserve ? { reserve } : {}) });
const two = await group(`2. contended: limit ${LIMIT}, ${QUEUED.toLocaleString("en")} calls at once (× ${BATCHES}), each yields once`, [
  { label: "edgeshed run(fn)", ...contended((l) => l.run(task), queued()) },
  { label: "edgeshed run(fn, { criticality })", ...contended((l, c) => l.run(task, CLASSED[c]), queued()) },
  // The default reserve holds sheddable calls to 5 of the 8 slots and default ones to 7: less concurrency.
  { label: "edgeshed { criticality }, reserve 0", ...contended((l, c) => l.run(task, CLASSED[c]), queued(noReserve)) },
  { label: "edgeshed run(fn, { criticality, key })", ...contended((l, c) => l.run(task, ONE_KEY[c]), queued()) },
  ...(pq
    ? [{ label: `p-queue ${pq.version} add(fn, { priority })`, ...contended((q, c) => q.add(task, { priority: 2 - c }), () => new pq.PQueue({ concurrency: LIMIT })) }]
    : []),
]);

console.log("\n## ratios (median of per-round ratios)");
console.log(`  uncontended: { criticality } / {} ${ratio(one, "edgeshed run(fn, { criticality })", "edgeshed run(fn, {})").toFixed(2)}×, {} / plain ${ratio(one, "edgeshed run(fn, {})", "edgeshed run(fn)").toFixed(2)}×`);
for (const [name, out] of [["uncontended", one], ["contended", two]]) {
  console.log(`  ${name}: { criticality } / plain ${ratio(out, "edgeshed run(fn, { criticality })", "edgeshed run(fn)").toFixed(2)}×, { criticality, key } / plain ${ratio(out, "edgeshed run(fn, { criticality, key })", "edgeshed run(fn)").toFixed(2)}×`);
}
if (pq) {
  const peer = `p-queue ${pq.version} add(fn, { priority })`;
  console.log(`  contended: edgeshed { criticality } / p-queue priority ${ratio(two, "edgeshed run(fn, { criticality })", peer).toFixed(2)}×, with reserve 0 ${ratio(two, "edgeshed { criticality }, reserve 0", peer).toFixed(2)}×, plain run / p-queue priority ${ratio(two, "edgeshed run(fn)", peer).toFixed(2)}×`);
}
{
  console.log(`  contended: { criticality } with reserve 0 / plain ${ratio(two, "edgeshed { criticality }, reserve 0", "edgeshed run(fn)").toFixed(2)}×`);
}

const jsonAt = process.argv.indexOf("--json");
if (jsonAt > 0) {
  const peer = pq ? `p-queue ${pq.version} add(fn, { priority })` : null;
  const ratios = [
    // Issue 32's goals: { criticality } at most 1.05 × plain, { criticality, key } at most 1.3 ×.
    { name: "uncontended: { criticality } / plain run", value: ratio(one, "edgeshed run(fn, { criticality })", "edgeshed run(fn)"), goal: 1.05 },
    { name: "uncontended: { criticality } / {}", value: ratio(one, "edgeshed run(fn, { criticality })", "edgeshed run(fn, {})") },
    { name: "uncontended: { criticality, key } / plain run", value: ratio(one, "edgeshed run(fn, { criticality, key })", "edgeshed run(fn)"), goal: 1.3 },
    { name: "contended: { criticality } / plain run", value: ratio(two, "edgeshed run(fn, { criticality })", "edgeshed run(fn)"), goal: 1.05 },
    { name: "contended: { criticality, key } / plain run", value: ratio(two, "edgeshed run(fn, { criticality, key })", "edgeshed run(fn)"), goal: 1.3 },
    ...(peer
      ? [
          { name: `contended: { criticality } / ${peer}`, value: ratio(two, "edgeshed run(fn, { criticality })", peer), goal: 0.7 },
          { name: `contended: plain run / ${peer}`, value: ratio(two, "edgeshed run(fn)", peer) },
        ]
      : []),
  ];
  const cases = (out) => Object.fromEntries(Object.entries(out).map(([label, r]) => [label, { ns: r.ns, min: r.min, max: r.max }]));
  writeFileSync(process.argv[jsonAt + 1], JSON.stringify({ bench: "node-criticality", quick: QUICK, uncontended: cases(one), contended: cases(two), ratios }, null, 2) + "\n");
}
