// Issue 13, "The Node simulation agrees": the dashboard's simulation
// (www/sim.js: its lanes, origin and Poisson load) run in Node.js with the
// built npm package (pkg/), one lane per limit (fixed, aimd, gradient2,
// vegas) fed the same arrivals, each against its own simulated origin of
// the same kind: `capacity` slots of `latency` ms (log-normal), the excess
// queued in the origin's FIFO. Halfway through, every origin's capacity
// halves. Prints goodput and admitted p99 per lane and phase, and the
// ordering. Not part of the test command.
//
//   ./scripts/build-pkg.sh && node benches/adaptive/node-sim.mjs
//   node benches/adaptive/node-sim.mjs --seconds 20 --load 3 --capacity 16 --latency 50 --sigma 0.25 --seed 1
//   node benches/adaptive/node-sim.mjs --json out.json   # also the rows and settings as JSON
// (--sigma: the spread of the origin's log-normal service time; the dashboard's is 0.25;
//  --lanes vegas,gradient2: only those lanes;
//  --limiters N: N independent Limiters in front of one origin instead, fleet.mjs)
import { writeFileSync } from "node:fs";
import { Clock, LimitedLane, LoadGenerator, Origin, rng } from "../../www/sim.js";
import { percentile } from "../../www/metrics.js";

const { Limiter } = await import("../../pkg/node.js");

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const SECONDS = arg("seconds", 20); // both phases together
const LOAD = arg("load", 3); // offered load, × the first phase's capacity
const CAPACITY = arg("capacity", 16); // origin slots in the first phase
const LATENCY_MS = arg("latency", 50);
const SEED = arg("seed", 1);
const SIGMA = arg("sigma", 0.25);
const JSON_OUT = process.argv.includes("--json") ? process.argv[process.argv.indexOf("--json") + 1] : null;
// The same for every lane: a small queue (about one origin latency) and a
// deadline of 5 origin latencies (the drop signal AIMD gets from a queueing origin).
const POLICY = { maxQueue: 8, queueTimeoutMs: LATENCY_MS, deadlineMs: 5 * LATENCY_MS };
// Fixed: the edge-sized default (Bounds::EDGE's initial 6), not hand-tuned;
// the adaptive lanes start there too.
const lanesArg = process.argv.indexOf("--lanes");
const LANES = lanesArg > 0 ? process.argv[lanesArg + 1].split(",") : ["fixed", "aimd", "gradient2", "vegas"];
if (process.argv.includes("--limiters")) {
  const { fleet } = await import("./fleet.mjs");
  await fleet({ Limiter, arg, lanesArg: lanesArg > 0 ? LANES : null });
  process.exit(0);
}

const clock = new Clock(1);
const phases = [
  { name: `capacity ${CAPACITY}`, capacity: CAPACITY, from: 0, to: SECONDS / 2 },
  { name: `capacity ${CAPACITY / 2} (halved)`, capacity: CAPACITY / 2, from: SECONDS / 2, to: SECONDS },
];
const phaseAt = (ms) => (ms / 1000 < phases[0].to ? 0 : 1);

const lanes = LANES.map((algorithm, i) => {
  const origin = new Origin({ capacity: CAPACITY, latencyMs: LATENCY_MS, sigma: SIGMA, random: rng(SEED * 31 + i), clock });
  const lane = new LimitedLane({ Limiter, origin, clock, options: { algorithm, maxInFlight: 6, ...POLICY } });
  const perPhase = phases.map(() => ({ latencies: [], limits: [] }));
  // Every completed call's latency, by the phase it completed in.
  lane.latency = { add: (t, ms) => perPhase[phaseAt(t * 1000)].latencies.push(ms), summary: () => ({}) };
  return { algorithm, lane, origin, perPhase, okAt: [0, 0] };
});

const generator = new LoadGenerator({
  rate: (LOAD * CAPACITY * 1000) / LATENCY_MS,
  random: rng(SEED),
  clock,
  onArrival: () => lanes.forEach(({ lane }) => lane.arrive()),
});
// The limit, sampled every 100 ms.
const sampler = setInterval(() => {
  const phase = phaseAt(clock.now());
  for (const l of lanes) l.perPhase[phase].limits.push(l.lane.stats().limit);
}, 100);

await new Promise((resolve) => setTimeout(resolve, phases[0].to * 1000));
for (const l of lanes) {
  l.okAt[0] = l.lane.ok;
  l.origin.setCapacity(phases[1].capacity);
}
await new Promise((resolve) => setTimeout(resolve, (phases[1].to - phases[1].from) * 1000));
generator.dispose();
clearInterval(sampler);
for (const l of lanes) l.okAt[1] = l.lane.ok - l.okAt[0];

const rows = lanes.map((l) => {
  const byPhase = phases.map((p, i) => {
    const seconds = p.to - p.from;
    const goodput = l.okAt[i] / seconds;
    const capacityRps = (p.capacity * 1000) / LATENCY_MS;
    const sorted = [...l.perPhase[i].latencies].sort((a, b) => a - b);
    const limits = l.perPhase[i].limits;
    // The second half of the phase: where the limit settled.
    const settled = limits.slice(Math.floor(limits.length / 2));
    return {
      goodput,
      fraction: goodput / capacityRps,
      p99: percentile(sorted, 99),
      limit: settled.reduce((a, b) => a + b, 0) / Math.max(1, settled.length),
    };
  });
  return { algorithm: l.algorithm, byPhase };
});
for (const l of lanes) l.lane.dispose();

const f = (x, d = 0) => (x == null ? "–" : x.toFixed(d));
console.log(
  `Node ${process.version}, pkg/ (wasm Limiter), ${SECONDS} s, offered ${LOAD}× = ${f((LOAD * CAPACITY * 1000) / LATENCY_MS)} req/s, ` +
    `origin ${CAPACITY} slots × ${LATENCY_MS} ms σ ${SIGMA} (then ${CAPACITY / 2}), maxQueue ${POLICY.maxQueue}, queueTimeoutMs ${POLICY.queueTimeoutMs}, deadlineMs ${POLICY.deadlineMs}, seed ${SEED}`,
);
console.log("");
console.log(`| limit | ${phases.map((p) => `${p.name}: goodput (of capacity) · admitted p99 · settled limit`).join(" | ")} |`);
console.log(`|---|${phases.map(() => "---").join("|")}|`);
for (const r of rows) {
  const cells = r.byPhase.map((p) => `${f(p.goodput)}/s (${f(p.fraction, 2)}) · ${f(p.p99)} ms · ${f(p.limit, 1)}`);
  console.log(`| ${r.algorithm === "fixed" ? "fixed (maxInFlight 6)" : r.algorithm} | ${cells.join(" | ")} |`);
}
console.log("");
phases.forEach((p, i) => {
  const byGoodput = [...rows].sort((a, b) => b.byPhase[i].goodput - a.byPhase[i].goodput).map((r) => r.algorithm);
  const byP99 = [...rows].sort((a, b) => a.byPhase[i].p99 - b.byPhase[i].p99).map((r) => r.algorithm);
  console.log(`${p.name}: goodput ${byGoodput.join(" > ")}; admitted p99 ${byP99.join(" < ")}`);
});
if (JSON_OUT) {
  const meta = { node: process.version, seconds: SECONDS, load: LOAD, capacity: CAPACITY, latencyMs: LATENCY_MS, sigma: SIGMA, seed: SEED, policy: POLICY };
  writeFileSync(JSON_OUT, JSON.stringify({ meta, phases: phases.map((p) => p.name), rows }, null, 2));
}
