// The bench's tables and goals, as Markdown (printed; scripts/benchmarks-md.mjs
// renders BENCHMARKS.md's workerd section with them).
const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : "–");
const f0 = (x) => (Number.isFinite(x) ? x.toFixed(0) : "–");
const ADAPTIVE = ["aimd", "gradient2", "vegas", "gradient2+queue"];

const find = (rows, config, arrival, level, kind = "level") =>
  rows.find((r) => r.config === config && r.arrival === arrival && r.level === level && r.kind === kind);
const configsOf = (rows) => [...new Set(rows.map((r) => r.config))];

/** One compact table per arrival process: goodput and admitted p99 per level. */
export function compact(rows, arrival, meta) {
  const levels = [...new Set(rows.filter((r) => r.kind === "level" && r.config !== "floor 503").map((r) => r.level))];
  const head = [...levels.map((k) => `${k}×`), `halved (${meta.halve.level}×, 5 s on)`];
  const out = [
    `| ${arrival}: goodput · admitted p99 ms · 503 p99 ms | ${head.join(" | ")} |`,
    `|---|${head.map(() => "---").join("|")}|`,
  ];
  for (const config of configsOf(rows)) {
    const cells = [...levels.map((k) => find(rows, config, arrival, k)), find(rows, config, arrival, meta.halve.level, "halving")];
    if (cells.every((c) => !c)) continue;
    const text = cells.map((r) =>
      r ? `**${r.goodput.toFixed(2)}** · ${f0(r.admitted.p99)}${r.unfinished ? "+" : ""} · ${f1(r.shed.p99)}` : "",
    );
    out.push(`| ${config} | ${text.join(" | ")} |`);
  }
  return out.join("\n");
}

/** Every row with every figure. */
function full(rows) {
  const out = [
    "| config | arrival | run | goodput | 2xx/s | 2xx p50 | 2xx p99 | 503 p99 | origin a active mean/peak | queue mean/peak | RSS peak MiB | isolate CPU (share of a core) | limits a/b at end | statuses | outside contract |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of rows) {
    const run = r.kind === "halving" ? `halved at ${r.level}× (5 s on; ≥ 0.9 after ${r.reachedMs ?? "–"} ms)` : `${r.level}×`;
    const statuses = Object.entries(r.statuses).map(([s, n]) => `${s}:${n}`).join(" ");
    out.push(
      `| ${r.config} | ${r.arrival} | ${run} | ${r.goodput.toFixed(2)} | ${f1(r.goodputRps)} | ${f1(r.admitted.p50)} | ${f1(r.admitted.p99)} | ${f1(r.shed.p99)} |` +
        ` ${f1(r.origin.meanActive)} / ${r.origin.peakActive} | ${f1(r.origin.meanQueued)} / ${r.origin.peakQueued} | ${(r.rssKiB / 1024).toFixed(1)} |` +
        ` ${r.cpu ? r.cpu.isolate.toFixed(2) : "–"} |` +
        ` ${r.limits ? `${r.limits.a}/${r.limits.b}` : "–"} | ${statuses} | ${r.outsideContract || 0} |`,
    );
  }
  return out.join("\n");
}

/** The compact tables, then the full one. */
export function tableMarkdown(rows, meta) {
  const arrivals = [...new Set(rows.map((r) => r.arrival))];
  const parts = arrivals.map((a) => compact(rows, a, meta));
  const note =
    `Cells: goodput (2xx/s ÷ ${meta.capacity}; after halving ÷ ${meta.capacity / 2}) · admitted p99 · 503 p99 ` +
    `("+": some requests were still unanswered ${3} s after the run and are not in the p99). Unloaded latency ${f1(meta.unloaded.p50)} ms (p50, 30 sequential requests).`;
  return `${parts.join("\n\n")}\n\n${note}\n\n<details><summary>Every figure</summary>\n\n${full(rows)}\n\n</details>\n`;
}

/** Whether each goal of issue 13 holds, per configuration. */
export function goalsMarkdown(rows, meta) {
  const unloaded = meta.unloaded.p50;
  const mark = (ok) => (ok === undefined ? "–" : ok ? "✓" : "✗");
  const levels = [1, 3, 10];
  const configs = configsOf(rows).filter((c) => c !== "floor 503");
  const floor = (arrival) => find(rows, "floor 503", arrival, 10)?.shed.p99;
  const goals = [
    ["smooth: goodput ≥ 0.9 at 1×, 3×, 10×", (c) => all(levels.map((k) => find(rows, c, "smooth", k)), (r) => r.goodput >= 0.9)],
    ["smooth: ≥ 0.9 of the new capacity 5 s after halving", (c) => all([find(rows, c, "smooth", meta.halve.level, "halving")], (r) => r.goodput >= 0.9)],
    [`smooth: admitted p99 ≤ 2× unloaded (${f0(2 * unloaded)} ms), every run`, (c) => all(rowsOf(rows, c, "smooth"), (r) => r.admitted.p99 <= 2 * unloaded && !r.unfinished)],
    ["bursty: goodput ≥ 0.85 at 1×, 3×, 10×", (c) => all(levels.map((k) => find(rows, c, "bursty", k)), (r) => r.goodput >= 0.85)],
    [`bursty: admitted p99 ≤ 3× unloaded (${f0(3 * unloaded)} ms), every run`, (c) => all(rowsOf(rows, c, "bursty"), (r) => r.admitted.p99 <= 3 * unloaded && !r.unfinished)],
    ["503 p99 ≤ floor + 5 ms at 10× (both arrivals)", (c) => all(["smooth", "bursty"].map((a) => find(rows, c, a, 10)), (r, i) => r.shed.p99 <= floor(["smooth", "bursty"][i]) + 5, (r) => r.shed.n > 0)],
  ];
  const out = [`| goal | ${configs.join(" | ")} |`, `|---|${configs.map(() => "---").join("|")}|`];
  for (const [what, test] of goals) out.push(`| ${what} | ${configs.map((c) => mark(test(c))).join(" | ")} |`);
  const floors = ["smooth", "bursty"].map((a) => `${a} ${f1(floor(a))} ms`).join(", ");
  return `${out.join("\n")}\n\nFloor worker's 503 p99 at 10×: ${floors}. Adaptive configurations: ${ADAPTIVE.join(", ")}.\n`;
}

function rowsOf(rows, config, arrival) {
  return rows.filter((r) => r.config === config && r.arrival === arrival);
}

/** `undefined` when a row is missing (not run) or not `applies`, else whether `test` holds for all. */
function all(list, test, applies = () => true) {
  if (list.length === 0 || list.some((r) => !r || !applies(r))) return undefined;
  return list.every(test);
}
