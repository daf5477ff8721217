// The timing harness of limiter.bench.mjs, as in benches/core/: on-CPU
// time of the main thread (wall-clock minus its run-queue wait from
// /proc/thread-self/schedstat), warm-up, rotated rounds, a full GC before
// every case (node --expose-gc).

import { readFileSync } from "node:fs";

function schedstat() {
  // "<on-cpu ns> <run-queue wait ns> <timeslices>" of the calling (main) thread.
  const [cpu, wait] = readFileSync("/proc/thread-self/schedstat", "utf8").trim().split(/\s+/).map(Number);
  return { cpu, wait };
}

async function timed(fn) {
  const s0 = schedstat();
  const t0 = process.hrtime.bigint();
  const checked = await fn();
  const t1 = process.hrtime.bigint();
  const s1 = schedstat();
  const wall = Number(t1 - t0);
  return { wall, onCpu: wall - (s1.wait - s0.wait), cpu: s1.cpu - s0.cpu, checked };
}

/** The median (upper middle for an even count). */
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

/**
 * A `group(name, cases)` that runs the cases of a group (each `{ label, ops,
 * setup?, run, check, teardown? }`) once as warm-up, then for `rounds` rounds
 * in an order rotated every round, and returns per-label stats in ns/op
 * (`rounds`: the per-round samples, in round order). With `only`, just the
 * cases whose label contains it (and the baselines) run.
 */
export function makeGroup({ rounds: ROUNDS, only: ONLY }) {
  return (name, cases) => group(name, cases, ROUNDS, ONLY);
}

async function group(name, cases, ROUNDS, ONLY) {
  cases = cases.filter((c) => !ONLY || c.label.includes(ONLY) || c.label.startsWith("baseline"));
  const samples = new Map(cases.map((c) => [c.label, { onCpu: [], wall: [], cpu: [] }]));
  const once = async (c) => {
    const state = c.setup ? await c.setup() : undefined;
    gc();
    const r = await timed(() => c.run(state));
    c.check(r.checked, state);
    if (c.teardown) await c.teardown(state);
    return r;
  };
  for (const c of cases) await once(c); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < cases.length; k++) {
      const c = cases[(k + round) % cases.length];
      const r = await once(c);
      samples.get(c.label).onCpu.push(r.onCpu / c.ops);
      samples.get(c.label).wall.push(r.wall / c.ops);
      samples.get(c.label).cpu.push(r.cpu / c.ops);
    }
  }
  const out = {};
  for (const c of cases) {
    const s = samples.get(c.label);
    out[c.label] = {
      ns: median(s.onCpu),
      min: Math.min(...s.onCpu),
      max: Math.max(...s.onCpu),
      rounds: s.onCpu, // one per round, in round order: for per-round ratios
      wall: median(s.wall),
      cpu: median(s.cpu),
    };
  }
  console.log(`\n## ${name}`);
  for (const c of cases) {
    const r = out[c.label];
    console.log(
      `  ${c.label.padEnd(44)} ${r.ns.toFixed(1).padStart(8)} ns/op  [${r.min.toFixed(1)}–${r.max.toFixed(1)}]  wall ${r.wall.toFixed(1)}  cpu ${r.cpu.toFixed(1)}`,
    );
  }
  return out;
}

/** Throws `check failed: message` unless `condition`. */
export function assert(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

/** A promise and its `resolve`. */
export function deferred() {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  return { promise, resolve };
}
