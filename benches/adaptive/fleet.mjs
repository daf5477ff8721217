// `node-sim.mjs --limiters N`: issue 21's measurement 1. N independent
// Limiters (isolates that share nothing) in front of ONE simulated origin
// (www/origin.js: `capacity` slots of `latency` ms, log-normal σ, the excess
// queued in its FIFO), fed one open-loop Poisson load (www/sim.js) spread
// round-robin over them; halfway through, the origin's capacity halves.
// Per algorithm and phase (second half of each phase): each limiter's mean
// limit, their sum over the capacity, the origin's mean concurrency over its
// capacity and its queue p95, goodput over capacity, and the admitted
// latency p50/p99 against the no-load latency. Real time (setTimeout).
//
//   ./scripts/build-pkg.sh && node benches/adaptive/node-sim.mjs --limiters 3
//   node benches/adaptive/node-sim.mjs --limiters 3 --capacity 8 --latency 20 --load 5 --seconds 40 \
//     --initial 20 --max 1000 --maxQueue 50 --queueTimeout 40 --lanes gradient2,vegas
import { Clock, LoadGenerator, Origin, rng } from "../../www/sim.js";
import { percentile } from "../../www/metrics.js";

export async function fleet({ Limiter, arg, lanesArg }) {
  const N = arg("limiters", 3);
  const SECONDS = arg("seconds", 40);
  const LOAD = arg("load", 5);
  const CAPACITY = arg("capacity", 8);
  const LATENCY_MS = arg("latency", 20);
  const SIGMA = arg("sigma", 0.25);
  const SEED = arg("seed", 1);
  const adaptive = { initialLimit: arg("initial", 20), minLimit: 1, maxLimit: arg("max", 1000) };
  const policy = { maxQueue: arg("maxQueue", 50), queueTimeoutMs: arg("queueTimeout", 40) };
  // AIMD needs an origin that sheds (it never sees a drop from a queueing one):
  // only with --lanes.
  const algorithms = lanesArg ?? ["gradient2", "vegas"];
  const rows = [];
  for (const algorithm of algorithms) rows.push(await one(algorithm));
  const f = (x, d = 2) => (x == null || Number.isNaN(x) ? "–" : x.toFixed(d));
  console.log(
    `Node ${process.version}, pkg/ (wasm Limiter), ${N} independent Limiters, one origin: ${CAPACITY} slots × ${LATENCY_MS} ms σ ${SIGMA} ` +
      `(then ${CAPACITY / 2}), offered ${LOAD}× open loop, adaptive ${JSON.stringify(adaptive)}, maxQueue ${policy.maxQueue}, ` +
      `queueTimeoutMs ${policy.queueTimeoutMs}, ${SECONDS} s, seed ${SEED}`,
  );
  console.log("");
  console.log("| algorithm | capacity | limits (mean, second half) | Σ limits / C | origin concurrency / C | origin queue p95 | goodput / C | admitted p50 / p99 (ms) |");
  console.log("|---|---|---|---|---|---|---|---|");
  for (const r of rows) {
    for (const p of r.phases) {
      console.log(
        `| ${r.algorithm} | ${p.capacity} | ${p.limits.map((l) => f(l, 1)).join(", ")} | ${f(p.sum / p.capacity)} | ${f(p.concurrency / p.capacity)} | ` +
          `${p.queueP95} | ${f(p.goodput)} | ${f(p.p50, 0)} / ${f(p.p99, 0)} |`,
      );
    }
  }

  async function one(algorithm) {
    const clock = new Clock(1);
    const origin = new Origin({ capacity: CAPACITY, latencyMs: LATENCY_MS, sigma: SIGMA, random: rng(SEED * 31), clock });
    const limiters = Array.from({ length: N }, () => new Limiter({ adaptive: { algorithm, ...adaptive }, ...policy }));
    const half = (SECONDS * 1000) / 2;
    const phases = [CAPACITY, CAPACITY / 2].map((capacity, i) => ({
      capacity,
      from: i * half + half / 2,
      to: (i + 1) * half,
      latencies: [],
      served: 0,
      samples: [],
    }));
    const phaseAt = (t) => phases.find((p) => t >= p.from && t < p.to);
    let next = 0;
    const generator = new LoadGenerator({
      rate: (LOAD * CAPACITY * 1000) / LATENCY_MS,
      random: rng(SEED),
      clock,
      onArrival: () => {
        const limiter = limiters[next++ % N];
        const start = clock.now();
        limiter.run(() => origin.call()).then(
          () => {
            const phase = phaseAt(clock.now());
            if (phase) {
              phase.served++;
              phase.latencies.push(clock.now() - start);
            }
          },
          () => {},
        );
      },
    });
    // Every 10 ms: the limits and the origin's state.
    const sampler = setInterval(() => {
      const phase = phaseAt(clock.now());
      if (!phase) return;
      phase.samples.push({
        limits: limiters.map((l) => l.stats().limit),
        atOrigin: origin.busy + origin.fifo.length,
        queue: origin.fifo.length,
      });
    }, 10);
    await new Promise((resolve) => setTimeout(resolve, half));
    origin.setCapacity(CAPACITY / 2);
    await new Promise((resolve) => setTimeout(resolve, half));
    generator.dispose();
    clearInterval(sampler);
    origin.dispose();
    for (const l of limiters) l.free();
    return {
      algorithm,
      phases: phases.map((p) => {
        const n = Math.max(1, p.samples.length);
        const limits = limiters.map((_, i) => p.samples.reduce((a, s) => a + s.limits[i], 0) / n);
        const queues = p.samples.map((s) => s.queue).sort((a, b) => a - b);
        const latencies = p.latencies.sort((a, b) => a - b);
        return {
          capacity: p.capacity,
          limits,
          sum: limits.reduce((a, b) => a + b, 0),
          concurrency: p.samples.reduce((a, s) => a + s.atOrigin, 0) / n,
          queueP95: percentile(queues, 95) ?? 0,
          goodput: p.served / ((p.to - p.from) / LATENCY_MS) / p.capacity,
          p50: percentile(latencies, 50),
          p99: percentile(latencies, 99),
        };
      }),
    };
  }
}
