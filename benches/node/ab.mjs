// A/B of two builds of the npm package (e.g. before and after a change) in
// one Node.js process: the contended and uncontended cases of
// limiter.bench.mjs and the shed path (a full limiter refusing calls at
// once), alternating rounds, median of the per-round ratios (wall-clock;
// only the ratio counts on a shared machine). Each build is loaded through
// its Node.js entry (node.js), as users import it.
//
//   node --expose-gc benches/node/ab.mjs /tmp/base/pkg pkg
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
const [baseDir, newDir] = process.argv.slice(2);
if (!baseDir || !newDir) throw new Error("usage: node --expose-gc benches/node/ab.mjs BASE_PKG_DIR NEW_PKG_DIR");
const load = async (dir) => (await import(pathToFileURL(resolve(dir, "node.js")).href)).Limiter;
const libs = { base: await load(baseDir), new: await load(newDir) };
const task = async () => { await null; return 1; };
const work = () => 1;
const noop = () => {};
const cases = {
  contended: async (L) => { const l = new L({ maxInFlight: 8, maxQueue: 10_000, queueTimeoutMs: 600_000 }); const t0 = performance.now(); for (let b = 0; b < 5; b++) await Promise.all(Array.from({ length: 10_000 }, () => l.run(task))); return (performance.now() - t0) / 50_000; },
  shed: async (L) => { const l = new L({ maxInFlight: 1 }); let release; const held = l.run(() => new Promise((r) => (release = r))); const t0 = performance.now(); for (let i = 0; i < 100_000; i++) await l.run(work).catch(noop); const dt = performance.now() - t0; release(); await held; return dt / 100_000; },
  uncontended: async (L) => { const l = new L({ maxInFlight: 1_000_000 }); const t0 = performance.now(); for (let i = 0; i < 100_000; i++) await l.run(work); return (performance.now() - t0) / 100_000; },
};
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1]; };
for (const [name, run] of Object.entries(cases)) {
  const ratios = [], t = { base: [], new: [] };
  for (const k of ["base", "new"]) await run(libs[k]);
  for (let r = 0; r < 9; r++) {
    const order = r % 2 ? ["new", "base"] : ["base", "new"];
    const m = {};
    for (const k of order) { globalThis.gc?.(); m[k] = await run(libs[k]); t[k].push(m[k]); }
    ratios.push(m.new / m.base);
  }
  console.log(`${name}: base ${(1e6 * median(t.base)).toFixed(0)} ns, new ${(1e6 * median(t.new)).toFixed(0)} ns, new/base ${median(ratios).toFixed(2)} [${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}]`);
}
