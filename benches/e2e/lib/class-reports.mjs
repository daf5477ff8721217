// The tables and goals of the benches of issues 23 and 24, from their JSON
// ({ bench, meta, rows, skipped }): criticality.mjs ("criticality-flood"),
// codel.mjs ("codel-bursty"), tenants.mjs ("noisy-tenant"). The scripts
// print them; lib/render.mjs renders a saved file again.
import { goalSummary, goalTable, skippedNote } from "./goals.mjs";

const f0 = (x) => (Number.isFinite(x) ? x.toFixed(0) : "–");
const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : "–");
const f2 = (x) => (Number.isFinite(x) ? x.toFixed(2) : "–");
const f3 = (x) => (Number.isFinite(x) ? x.toFixed(3) : "–");
const refusals = (fig) => Object.entries(fig.reasons ?? {}).map(([k, n]) => `${k}: ${n}`).join(", ") || "–";
const limit = (meta) => 2 * meta.unloaded.p50;

/** Figures every bench shows: origin a's concurrency, the gateway isolate's CPU, what fell outside the contract. */
const common = [
  ["origin a active mean / peak", (r) => `${f1(r.origin.meanActive)} / ${r.origin.peakActive}`],
  ["CPU isolate / load generator", (r) => `${f2(r.cpu?.isolate)} / ${f2(r.cpu?.generator)}`],
  ["outside contract", (r) => String(r.outsideContract ?? 0)],
];

/** A latency goal: `p99` of the row within 2× unloaded, and no answer missing from it. */
const within = (meta, p99, lost = () => 0) => (r) => (Number.isFinite(p99(r)) ? p99(r) <= limit(meta) && lost(r) === 0 : false);

const flood = {
  title: (m) =>
    `Criticality flood: critical traffic at ${m.criticalShare}× capacity (${m.capacity} req/s) on ${m.paths.critical}, ` +
    `sheddable traffic at the level's multiple on ${m.paths.sheddable}`,
  columns: (m) => [
    ["config", (r) => r.config],
    ["sheddable", (r) => `${r.level}×`],
    ["critical goodput (2xx ÷ sent)", (r) => `${f3(r.classes.critical.goodput)} of ${r.classes.critical.sent}`],
    ["critical p50 / p99 ms", (r) => `${f1(r.classes.critical.p50)} / ${f1(r.classes.critical.p99)}`],
    ["critical refusals", (r) => refusals(r.classes.critical)],
    ["sheddable 2xx/s ÷ capacity", (r) => f2(r.classes.sheddable.okRps / m.capacity)],
    ["sheddable p99 ms", (r) => f1(r.classes.sheddable.p99)],
    ["sheddable refusals", (r) => refusals(r.classes.sheddable)],
    ...common,
  ],
  goals: (m) => [
    ["critical goodput ≥ 0.99", (r) => r.classes.critical.goodput >= 0.99],
    [`critical p99 ≤ 2× unloaded (${f0(limit(m))} ms)`, within(m, (r) => r.classes.critical.p99, (r) => r.classes.critical.lost)],
  ],
};

const codel = {
  title: (m) =>
    `Bursty arrivals: codel against fifo, both maxInFlight ${m.slots}, maxQueue ${m.maxQueue}, queueTimeoutMs ${m.queueTimeoutMs} ` +
    `(codel: codelTargetMs default 5); autocannon bursts 10 times a second; "halved": the origins drop from ${m.slots} to ${m.slots / 2} slots ` +
    `${m.halve.preS} s in, measured from 5 s after, against the halved capacity`,
  columns: (m) => [
    ["config", (r) => r.config],
    ["run", (r) => (r.kind === "halving" ? `halved at ${r.level}× (≥ 0.9 after ${r.reachedMs ?? "never"} ms)` : `${r.level}×`)],
    ["goodput (2xx/s ÷ capacity)", (r) => f2(r.goodput)],
    ["2xx p50 / p99 ms", (r) => `${f1(r.admitted.p50)} / ${f1(r.admitted.p99)}${r.unfinished ? "+" : ""}`],
    ["503 p99 ms", (r) => f1(r.shed.p99)],
    ["statuses", (r) => Object.entries(r.statuses).map(([s, n]) => `${s}: ${n}`).join(", ")],
    ["origin a queue mean / peak", (r) => `${f1(r.origin.meanQueued)} / ${r.origin.peakQueued}`],
    ...common,
  ],
  goals: (m) => [
    ["goodput ≥ 0.9", (r) => r.goodput >= 0.9],
    [`admitted p99 ≤ 2× unloaded (${f0(limit(m))} ms)`, within(m, (r) => r.admitted.p99, (r) => r.unfinished)],
  ],
};

/** A noisy-tenant run: its level, and whether the flood left its key out. */
const noisyRun = (r) => `${r.level}×${r.keyless ? " keyless" : ""}`;
/** Whether the run has a noisy tenant (level 0 is the quiet tenants alone: the reference). */
const loaded = (r) => r.level > 0;

const tenants = {
  title: (m) =>
    `Noisy tenant: ${m.quietTenants} quiet tenants at ${m.quietShare}× capacity (${m.capacity} req/s) each and one noisy tenant ` +
    `at the level's multiple, keyed by the ${m.keyHeader} header ("keyless": the noisy requests without it); level 0: the quiet ` +
    `tenants alone (each configuration's reference)`,
  columns: (m) => [
    ["config", (r) => r.config],
    ["noisy", noisyRun],
    ["quiet goodput (2xx ÷ sent) · worst tenant", (r) => `${f3(r.classes.quiet.goodput)} · ${f3(r.classes.quiet.worstGoodput)}`],
    ["quiet goodput ÷ level 0", (r) => (r.quietRelative === undefined ? "–" : f3(r.quietRelative))],
    ["quiet p50 / p99 ms · worst tenant p99", (r) => `${f1(r.classes.quiet.p50)} / ${f1(r.classes.quiet.p99)} · ${f1(r.classes.quiet.worstP99)}`],
    ["quiet refusals", (r) => refusals(r.classes.quiet)],
    ["noisy 2xx/s ÷ capacity", (r) => (r.classes.noisy ? f2(r.classes.noisy.okRps / m.capacity) : "–")],
    ["noisy refusals", (r) => (r.classes.noisy ? refusals(r.classes.noisy) : "–")],
    ["origin a busy (mean active ÷ slots)", (r) => f2(r.busy ?? r.origin.meanActive / m.slots)],
    ...common,
  ],
  goals: (m) => [
    ["quiet goodput ≥ 0.95 × level 0", (r) => (loaded(r) && r.quietRelative !== undefined ? r.quietRelative >= 0.95 : undefined)],
    [`quiet p99 ≤ 2× unloaded (${f0(limit(m))} ms)`, within(m, (r) => r.classes.quiet.p99, (r) => r.classes.quiet.lost)],
    ["origin busy ≥ 0.9", (r) => (loaded(r) ? (r.busy ?? r.origin.meanActive / m.slots) >= 0.9 : undefined)],
  ],
};

/** Every bench's report: { title(meta), columns(meta), goals(meta) }, by the JSON's `bench`. */
export const REPORTS = { "criticality-flood": flood, "codel-bursty": codel, "noisy-tenant": tenants };

/** The Markdown of a bench's results: title, the table with the goals per row, the summary per configuration, what was skipped. */
export function renderBench({ bench, meta, rows, skipped }, { brief = false } = {}) {
  const report = REPORTS[bench];
  if (!report) throw new Error(`unknown bench "${bench}" (known: ${Object.keys(REPORTS).join(", ")})`);
  const goals = report.goals(meta);
  const configs = meta.configs ?? [];
  // `brief` (BENCHMARKS.md): the configurations in one paragraph, and no
  // per-configuration summary (each row's goal columns already say it).
  const notes = brief
    ? configs.map((c) => `${c.name}: ${c.note}`).join("; ")
    : configs.map((c) => `- ${c.name}: ${c.note}`).join("\n");
  return [
    `**${report.title(meta)}.** Unloaded latency through the gateway: p50 ${f1(meta.unloaded.p50)} ms (30 sequential requests). ` +
      `${meta.levelS} s per level${meta.quick ? " (--quick)" : ""}; git ${meta.machine.git}, ${meta.machine.at}; \`${meta.machine.uptime}\`.`,
    brief && notes ? `Configurations: ${notes}.` : notes,
    goalTable(rows, report.columns(meta), goals),
    brief ? "" : goalSummary(rows, goals),
    skippedNote(skipped),
  ]
    .filter(Boolean)
    .join("\n\n");
}
