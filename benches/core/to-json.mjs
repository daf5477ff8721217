// benches/results/core.json from two logs of `cargo bench --bench core` (the
// bench prints only): each ratio line, in the order the bench prints them,
// named here with issue 32's goal; the second log gives the "second run".
//
//   cargo bench --bench core > /tmp/core-1.log && cargo bench --bench core > /tmp/core-2.log
//   node benches/core/to-json.mjs /tmp/core-1.log /tmp/core-2.log > benches/results/core.json
import { readFileSync } from "node:fs";

// The ratio lines of benches/core/main.rs, in print order: [case, goal].
const CASES = [
  ["ConcurrencyLimit, uncontended (limit 64)", 0.5],
  ["LoadShed+ConcurrencyLimit, uncontended (admitting)", 0.5],
  ["one-layer shed policy, uncontended, vs tower LoadShed+ConcurrencyLimit", 0.5],
  ["ConcurrencyLimit, contended (limit 4, 64 callers, FuturesUnordered)", 0.8],
  ["  the same, net of the workload without a limiter", null],
  ["ConcurrencyLimit, contended (limit 4, 64 callers, LocalSet tasks)", 0.8],
  ["  the same, net of the workload without a limiter", null],
  ["LoadShed+ConcurrencyLimit, saturated (rejecting)", 0.5],
  ["one-layer shed policy, saturated (rejecting), vs tower LoadShed+ConcurrencyLimit", 0.5],
  ["Admission: try_admit_as(Sheddable) with a reserve / plain try_admit", 1.05],
  ["Admission: try_admit_as(Critical) with a reserve / plain try_admit", 1.05],
  ["Admission: try_admit (default) with a reserve / plain try_admit", 1.05],
  ["Admission: admit_call(Sheddable) polled once / plain admit", 1.05],
  ["Admission: admit_call(Sheddable, key) polled once / plain admit (a keyed call)", 1.5],
  ["ClassifiedLimitLayer / ConcurrencyLimitLayer::shed", 1.1],
  ["GCRA / governor, 1,000 keys, std clock vs MonotonicClock", 1.0],
  ["GCRA / governor, 1,000 keys, still clock vs FakeRelativeClock", 1.0],
  ["GCRA / governor, 1,000 keys, std clock vs quanta (governor's default)", 1.0],
  ["GCRA / governor, 10,000 keys, std clock vs MonotonicClock", 1.0],
  ["GCRA / governor, 10,000 keys, still clock vs FakeRelativeClock", 1.0],
  ["GCRA / governor, 10,000 keys, std clock vs quanta (governor's default)", 1.0],
];

const ratios = (file) => {
  const found = [...readFileSync(file, "utf8").matchAll(/^\s+ratio .*?= ([0-9.]+)/gm)].map((m) => Number(m[1]));
  if (found.length !== CASES.length) throw new Error(`${file}: ${found.length} ratio lines, expected ${CASES.length} (benches/core/main.rs changed? update CASES)`);
  return found;
};
const [first, second] = process.argv.slice(2);
if (!first) throw new Error("usage: node benches/core/to-json.mjs FIRST.log [SECOND.log]");
const a = ratios(first);
const b = second ? ratios(second) : [];
const cases = CASES.map(([name, goal], i) => ({ case: name, ratio: a[i], secondRun: b[i] ?? null, goal }));
console.log(JSON.stringify({ bench: "core", from: "cargo bench --bench core, two runs (benches/core/to-json.mjs)", cases }, null, 2));
