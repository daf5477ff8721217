// The cost of the per-key rate check in the npm `Limiter` (pkg/node.js)
// against p-queue 9's interval limiting (`intervalCap` + `interval`), the
// Node peer with a rate limit (issue 24's goal: ≤ 0.5× p-queue). Both are set
// so high that no call is ever refused or delayed: what is measured is the
// check itself on a call that conforms. Harness: harness.mjs (on-CPU ns/op,
// median of rotated rounds; ratios are medians of per-round ratios).
//
//   node --expose-gc benches/node/rate.mjs            # ~10 s
//   node --expose-gc benches/node/rate.mjs --quick    # smoke (~2 s)
//   node --expose-gc benches/node/rate.mjs --json benches/results/node-rate.json
import { writeFileSync } from "node:fs";
import { Limiter } from "../../pkg/node.js";
import { assert, makeGroup, median } from "./harness.mjs";
import { loadPQueue } from "./peers.mjs";

const QUICK = process.argv.includes("--quick");
const group = makeGroup({ rounds: QUICK ? 3 : 9 });
const pq = await loadPQueue();

const CALLS = QUICK ? 20_000 : 100_000;
const KEYS = ["tenant-0", "tenant-1", "tenant-2", "tenant-3"];
// Far above what one process can send: every call conforms.
const RATE = { perSecond: 1e9, burst: 1e9, maxKeys: 64 };
const ratio = (out, a, b) => median(out[a].rounds.map((x, i) => x / out[b].rounds[i]));

const work = () => 1;
const oneAfterAnother = (setup, submit) => ({
  ops: CALLS,
  setup,
  run: async (limiter) => {
    let sum = 0;
    for (let i = 0; i < CALLS; i++) sum += await submit(limiter, i);
    return sum;
  },
  check: (sum) => assert(sum === CALLS, "every call ran"),
});
const KEYED = KEYS.map((key) => ({ key }));
const out = await group(`uncontended: ${CALLS.toLocaleString("en")} calls one after another, ${KEYS.length} keys`, [
  { label: "edgeshed run(fn, { key })", ...oneAfterAnother(() => new Limiter({ maxInFlight: 1_000_000 }), (l, i) => l.run(work, KEYED[i % KEYS.length])) },
  {
    label: "edgeshed rate run(fn, { key })",
    ...oneAfterAnother(() => new Limiter({ maxInFlight: 1_000_000, rate: RATE }), (l, i) => l.run(work, KEYED[i % KEYS.length])),
  },
  ...(pq
    ? [
        {
          label: `p-queue ${pq.version} interval`,
          ...oneAfterAnother(
            () => new pq.PQueue({ concurrency: 1_000_000, intervalCap: 1e9, interval: 1000 }),
            (q) => q.add(work),
          ),
        },
      ]
    : []),
]);

const ratios = [
  { name: "rate check: edgeshed with rate / without", value: ratio(out, "edgeshed rate run(fn, { key })", "edgeshed run(fn, { key })") },
  ...(pq
    ? [{ name: `edgeshed with rate / p-queue ${pq.version} interval`, value: ratio(out, "edgeshed rate run(fn, { key })", `p-queue ${pq.version} interval`), goal: 0.5 }]
    : []),
];
console.log("\n## ratios (median of per-round ratios)");
for (const r of ratios) console.log(`  ${r.name} ${r.value.toFixed(2)}×${r.goal ? ` (goal ≤ ${r.goal}×)` : ""}`);
const jsonAt = process.argv.indexOf("--json");
if (jsonAt > 0) {
  const cases = Object.fromEntries(Object.entries(out).map(([label, r]) => [label, { ns: r.ns, min: r.min, max: r.max }]));
  writeFileSync(process.argv[jsonAt + 1], JSON.stringify({ bench: "node-rate", quick: QUICK, calls: CALLS, cases, ratios }, null, 2) + "\n");
}
