// Writes BENCHMARKS.md from the benches' JSON output in benches/results/
// (benches/results/index.json says when and how each file was measured).
//
//   node scripts/benchmarks-md.mjs           # rewrite BENCHMARKS.md
//   node scripts/benchmarks-md.mjs --check   # exit 1 if BENCHMARKS.md differs (scripts/test.sh docs)
//
// To refresh a table: run the command its section names (it writes the JSON
// file), set the file's date in index.json, then run this script.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { compact, goalsMarkdown } from "../benches/e2e/lib/report.mjs";
import { renderBench } from "../benches/e2e/lib/class-reports.mjs";
import { staleness, withoutStaleness } from "./lib/bench-staleness.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const RESULTS = join(ROOT, "benches/results");
const TARGET = join(ROOT, "BENCHMARKS.md");
const index = JSON.parse(readFileSync(join(RESULTS, "index.json"), "utf8")).files;
const load = (name) => JSON.parse(readFileSync(join(RESULTS, name), "utf8"));

const f = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : "–");
const goalCell = (ratio, goal) => (goal == null ? "none set" : `≤ ${goal} ${ratio <= goal ? "✓" : "✗"}`);
const table = (head, rows) =>
  [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");

/** Whether git could not tell, for some input, if its table is stale (then --check ignores those sentences). */
let stalenessUnknown = false;

/** The "measured" line under each table: date, command, input file, build, whether it was transcribed, and whether it is stale. */
function source(...names) {
  return names
    .map((name) => {
      const e = index[name];
      if (!e) throw new Error(`benches/results/index.json has no entry for ${name}`);
      const how = e.transcribed ? `transcribed from the log's "${e.log}"` : `the bench's own output (log: "${e.log}")`;
      const note = e.note ? ` (${e.note})` : "";
      const stale = staleness(ROOT, name, e);
      if (stale.state === "unknown") stalenessUnknown = true;
      const line = `Measured ${e.date} with \`${e.command}\` (build \`${e.build}\`); input \`benches/results/${name}\`${note}, ${how}.`;
      return stale.note ? `${line}\n${stale.note}` : line;
    })
    .join("\n");
}

function core() {
  const { cases } = load("core.json");
  const rows = cases.map((c) => [c.case, `**${f(c.ratio)}**`, f(c.secondRun), goalCell(c.ratio, c.goal)]);
  return `## Native core: edgeshed vs tower 0.5.3 on tokio, the criticality path, GCRA vs governor

\`benches/core/\` (\`harness = false\`): \`poll_ready\` + \`call\` + awaiting the response of an echo
service, edgeshed's \`ConcurrencyLimit\` / \`LoadShed\` against tower's on tokio's current-thread runtime; the
\`Admission\` paths of a call that names its criticality or a key against a plain one; edgeshed's GCRA against
governor 0.10's \`check_key\`. Median of 7 rounds of on-CPU ns/op (wall clock minus run-queue wait); each ratio is
edgeshed's time over the peer's (or the plain path's), lower is better; the second run is the whole bench again.

${table(["case", "ratio", "second run", "goal"], rows)}

${source("core.json")}
`;
}

function node() {
  const { summary, memory } = load("node.json");
  const paths = ["uncontended", "contended", "overload (shed)"];
  const rows = Object.entries(summary).map(([peer, byPath]) => [
    peer,
    ...paths.map((p) => (byPath[p] ? `**${f(byPath[p].ratio)}** (${goalCell(byPath[p].ratio, byPath[p].goal)})` : "–")),
  ]);
  const mem = Object.values(memory)
    .map((m) => `${m.label}: ${f(m.total, 0)} B per queued waiter`)
    .join("; ");
  const { queued = 10_000 } = load("node.json");
  return `## Node.js: \`Limiter.run\` against the fast queues, p-limit, p-queue and cockatiel

\`benches/node/limiter.bench.mjs\`: the npm package as users load it (\`pkg/node.js\`) against each peer in
one process, alternating rounds; each cell is edgeshed's time per task over the peer's (median of per-round
ratios; below 1 edgeshed is faster) and the goal. uncontended: \`run(fn)\` one at a time, \`fn\` returning a
settled promise; contended: limit 8, ${queued.toLocaleString("en")} tasks queued at once; overload: limit 1 held,
every call refused (the peers with a user-side check where they cannot shed). The fast queues
(\`benches/node/fast-peers.mjs\`): @henrygd/queue, fastq and async-sema. "p-queue (timeout)": p-queue with a
per-task timeout, the feature-equivalent peer.

${table(["edgeshed / peer", ...paths], rows)}

Memory (case 4): ${mem} (goal for a fresh instance: ≤ p-limit's).${
    summary["tower-on-wasm"]
      ? ""
      : ` tower-on-wasm (\`benches/tower-wasm/\`) was not built in this run;
its last figures, on an older build, are in the log ("Issue 6 goals: which hold").`
  }

${source("node.json")}
`;
}

function nodeFetch() {
  const { results, summary } = load("node-fetch.json");
  const ns = (out, label) => (out[label] ? `${f(out[label].ns / 1000, 0)} µs` : "–");
  const rows = Object.entries(summary).map(([path, r]) => [
    path,
    ns(results[path], "fetch (undici)"),
    ns(results[path], "edgeshed Limiter.fetch"),
    `**${f(r.overPlain)}**`,
    goalCell(r.overPlain, r.goal ?? 1.1),
    r.overBefore == null ? "–" : `**${f(r.overBefore)}**`,
  ]);
  return `## Node.js: \`Limiter.fetch\` against \`fetch\`

\`benches/node/fetch.mjs\`: a body read to its end through \`Limiter.fetch\` (limit 8; its permit held until the
last chunk is read) against Node's own \`fetch\`, from a node:http origin on 127.0.0.1 in a child process; on-CPU
time of the client's thread per fetch; "before": the build before issue 32's work, in the same rounds (named in
the line under the table).

${table(["body, concurrency", "fetch", "Limiter.fetch", "Limiter.fetch / fetch", "goal", "Limiter.fetch / before"], rows)}

${source("node-fetch.json")}
`;
}

function size() {
  const { sizes, node: startup, workerd } = load("size.json");
  const kib = (r, key) => (r[key] != null ? f(r[key] / 1024, 1) : f(r[`${key}KiB`], 1));
  const label = { worker: "edge worker (`dist/worker/`)", package: "npm package (`pkg/`)" };
  const sizeRows = Object.entries(sizes).map(([name, r]) => [
    label[name] ?? name,
    `**${kib(r, "wasmGzip")} KiB**`,
    `≤ ${r.goalKiB} KiB ${kib(r, "wasmGzip") <= r.goalKiB ? "✓" : "✗"}`,
    `${f(startup[name]?.compile)} + ${f(startup[name]?.instantiate)} ms`,
  ]);
  const coldRows = Object.entries(workerd).map(([name, r]) => [name, f(r.ready, 1), f(r.first, 1), f(r.total, 1)]);
  return `## Size and start-up

\`benches/size.mjs\`: \`gzip -9\` of each wasm file; \`WebAssembly.compile\` + \`initSync\` in a fresh Node.js
process (median of 9); Miniflare cold starts against a trivial JS worker.

${table(["artefact", "wasm gzip", "goal", "Node compile + instantiate"], sizeRows)}

${table(["workerd (Miniflare 4.20260426.0), ms", "new Miniflare → ready", "first request", "total"], coldRows)}

The test command holds the sizes to their goals on every run (suites \`npm_package\`, \`worker\`).
${source("size.json")}
`;
}

function e2e() {
  const { meta, rows } = load("e2e-goodput.json");
  const arrivals = [...new Set(rows.map((r) => r.arrival))];
  return `## workerd: goodput at overload

\`benches/e2e/run.mjs\`: the gateway (\`worker/index.mjs\` + \`dist/worker/\`) in workerd fans \`/aggregate\` out to
origins a and b (${meta.slots} requests at once in ${meta.latencyMs} ms each: capacity ${meta.capacity} req/s), per
configuration and arrival process (smooth Poisson, bursty autocannon), at 1×, 3× and 10× the capacity, then
the origins' slots halve. p-limit and naive are plain-JS workers that queue without bound; floor 503 answers
503 at once (the latency floor of a shed answer). Every figure of the run: \`node benches/e2e/lib/render.mjs
benches/results/e2e-goodput.json\`.

${arrivals.map((a) => compact(rows, a, meta)).join("\n\n")}

Cells: goodput (2xx/s ÷ ${meta.capacity}; after halving ÷ ${meta.capacity / 2}) · admitted p99 · 503 p99 ("+": some
requests unanswered 3 s after the run, not in the p99). Unloaded latency ${f(meta.unloaded.p50, 1)} ms (p50).

${goalsMarkdown(rows, meta)}
![goodput against admitted p99, per configuration and level](BENCHMARKS-adaptive.svg)

(The plot: \`node benches/e2e/lib/plot.mjs benches/results/e2e-goodput.json BENCHMARKS-adaptive.svg\`.)
${source("e2e-goodput.json")}
`;
}

function cpu() {
  const { summary: s, rounds } = load("cpu.json");
  const rows = [
    ["edgeshed worker / floor 503 worker", `**${f(s.edgeshedOverFloor)}**`],
    ["previous build / floor 503 worker", f(s.beforeOverFloor)],
    ["edgeshed worker / previous build", `**${f(s.edgeshedOverBefore)}**`],
  ];
  if (s.msPerResponse) for (const [name, ms] of Object.entries(s.msPerResponse)) rows.push([`${name}, ms per response`, f(ms, 3)]);
  const goal = (ratio) => `≤ 1.15 ${ratio <= 1.15 ? "✓" : "✗"}`;
  rows[0].push(goal(s.edgeshedOverFloor));
  for (const row of rows.slice(1)) row.push("");
  if (s.proxied) {
    rows.push(["proxied: edgeshed worker / plain JS proxy worker", `**${f(s.proxied.edgeshedOverPlain)}**`, goal(s.proxied.edgeshedOverPlain)]);
    if (s.proxied.beforeOverPlain != null) rows.push(["proxied: previous build / plain JS proxy worker", f(s.proxied.beforeOverPlain), ""]);
    for (const [name, ms] of Object.entries(s.proxied.msPerResponse)) rows.push([`proxied: ${name}, ms per response`, f(ms, 3), ""]);
  }
  return `## workerd: CPU per response

\`benches/e2e/cpu.mjs\`: workerd's user + system CPU per response, median of the per-round ratios over ${rounds}
alternating rounds. Under closed-loop overload (~94 % shed 503s): the edgeshed worker beside the floor worker
(and \`--before DIR\`: an older build). Proxied: a prefix route with room for every request (origin 64 at once
in 1 ms, 16 connections) beside a plain JS proxy worker (\`return fetch(origin + path)\`).

${table(["ratio", "median", "goal"], rows)}

${source("cpu.json")}
`;
}

function nodeSim() {
  const runs = ["node-sim.json", "node-sim-sigma-0.02.json"].map(load);
  const { meta, phases } = runs[0];
  const body = runs.flatMap(({ meta: { sigma }, rows }) =>
    rows.map((r) => [
      `${r.algorithm === "fixed" ? "fixed (maxInFlight 6)" : r.algorithm}, σ ${sigma}`,
      ...r.byPhase.map((p) => `${f(p.goodput, 0)}/s (**${f(p.fraction)}**) · ${f(p.p99, 0)} ms · ${f(p.limit, 1)}`),
    ]),
  );
  return `## Node simulation of the adaptive limits

\`benches/adaptive/node-sim.mjs\`: the dashboard's simulation (\`www/sim.js\`) in Node.js with the wasm \`Limiter\`,
one lane per limit fed the same Poisson arrivals (${meta.load}× the first capacity), each against its own origin
of ${meta.capacity} slots × ${meta.latencyMs} ms (log-normal, σ the spread of its service times), halved after
${meta.seconds / 2} s; every lane \`maxQueue\` ${meta.policy.maxQueue}, \`queueTimeoutMs\` ${meta.policy.queueTimeoutMs}, \`deadlineMs\` ${meta.policy.deadlineMs}.

${table(["limit, origin σ", ...phases.map((p) => `${p}: goodput (of capacity) · admitted p99 · settled limit`)], body)}

${source("node-sim.json", "node-sim-sigma-0.02.json")}
`;
}

function budget() {
  const { meta, rows } = load("budget.json");
  const body = rows.map((r, i) => {
    const base = rows[i - (i % 2)];
    const added = r.budget === "yes" ? `${f(r.p50 - base.p50, 1)} / ${f(r.p99 - base.p99, 1)}` : "–";
    return [r.load, r.budget, r.sent, r.statuses[200] ?? 0, r.statuses[503] ?? 0, r.callsPerAdmitted ?? "–", f(r.p50, 1), f(r.p99, 1), added, `${r.originPeak} of ${meta.budget}`, `**${f(r.goodput, 3)}**`];
  });
  return `## workerd: fleet budget

\`benches/budget/run.mjs\`: ${meta.gateways} gateway isolates share one \`EdgeshedBudget\` object (budget ${meta.budget}) in
front of an origin holding each call ${meta.latencyMs} ms (capacity ${meta.capacityRps} req/s), open-loop arrivals at
1× and 10× for ${meta.seconds} s, against the same fleet with the budget split statically (\`maxInFlight\`
${meta.budget / meta.gateways} per isolate). Goodput: origin busy time / (budget × run time). Goals: object calls
per admitted request ≤ 0.1 at 10×, added p50 ≤ 2 ms, origin peak ≤ budget, goodput ≥ 0.9 at 10×.

${table(["load", "budget", "sent", "200", "503", "object calls / admitted", "p50 ms", "p99 ms", "added p50 / p99 ms", "origin peak", "goodput"], body)}

${source("budget.json")}
`;
}

function budgetScale() {
  const { meta, rows } = load("budget-scale.json");
  const before = load("budget-scale-before.json").rows;
  const body = rows.map((r, i) => {
    const b = before[i];
    return [
      r.isolates,
      r.run === "hostile" ? `hostile (${r.restarts} restarts)` : r.run,
      `${r.load}×`,
      `${r.originPeak} of ${r.budget}`,
      `**${f(r.goodput, 3)}** (${f(b.goodput, 3)})`,
      f(r.idealGoodput, 3),
      f(r.originBusy, 3),
      f(r.callsPerAdmitted, 3),
      `${r.callsPerSecond} (${r.peakCallsPerSecond})`,
      `${r.waitP50} / ${r.waitP99}`,
      `${r.refusedAtShare} / ${r.refusedNoLease} / ${r.refusedWaitingObject} / ${r.refusedUnreachable} / ${r.refusedLocal}`,
      `${f(r.permitsInFlight, 1)} / ${f(r.permitsIdleLease, 1)} / ${f(r.permitsSpare, 1)} / ${f(r.leasedToEvicted, 1)} (${f(b.leasedToEvicted, 1)}) / ${f(r.permitsFree, 1)} / ${f(r.stranded, 1)}`,
    ];
  });
  return `## Native: the fleet budget at scale (simulated)

\`crates/edgeshed-worker/tests/budget_scale.rs\`: 10, 100 and 1,000 isolates share one origin's budget of ${meta.budget}
(each isolate's own limit ${meta.localLimit}), on a manual clock with the real lease table and holders. Calls hold the
origin ${meta.serviceMs[0]}–${meta.serviceMs[1]} ms (capacity ${meta.capacityRps} calls/s); Poisson arrivals at 0.5×, 1× and 2× that; a tenth of
the isolates (at least 2) get ${meta.hotShare * 100} % of the requests; isolates live ${meta.lifetimeMs / 1000} s on average (exponential) and are
replaced by new ones without a lease; object calls take ${meta.objectRttMs[0]}–${meta.objectRttMs[1]} ms (round trip, uniform, seeded); \`leaseTtlMs\`
${meta.leaseTtlMs}, \`timeoutMs\` ${meta.timeoutMs} (a lease lasts \`timeoutMs\` plus a quarter of \`leaseTtlMs\`: ${meta.timeoutMs + meta.leaseTtlMs / 4} ms; before this change, ${meta.leaseTtlMs} ms); ${meta.seconds} s simulated, the first ${meta.warmupSeconds} s not measured. *hostile*: the object also
restarts (a fresh table in learning mode, its kept calls failing) and is slow (calls of 0.1–4 s) for 1 s, each
every 10 s on average. Goodput: admitted / min(offered, capacity × time); origin busy: permit-ms at the origin /
(budget × time). One exact limit: the goodput of a single limit of ${meta.budget} in front of the same traffic, requests
waiting in one queue up to the same patience (${meta.leaseTtlMs / 10} ms): what a perfect fleet budget would reach. Wait: arrival to
admission of admitted requests. Refused (requests): at share (refused at once: the isolate holds its fair share of a
contended budget and has no call in flight, so no permit is coming), no lease (its patience ended while its isolate held
none), waiting for the object (its patience or own timeout ended while the isolate held a lease the object did not
grow), unreachable (\`unavailable: "shed"\` while lease calls fail), local limit (the isolate's own \`maxInFlight\`,
calls in flight and requests waiting, was full). Permits (means of a sample per second, of ${meta.budget}): in flight at the origin
(evicted isolates' calls included), idle leases (held by live isolates with no call in flight), spare (held beyond
their calls in flight by isolates with some), evicted (counted by the table for isolates that are gone; they come back
at the lease's expiry), free (not leased), stranded (counted for live isolates beyond what they hold or use); the rest
are leases whose holder has a lease call under way. In brackets: the same run (the same requests and evictions) on the
budget code before this change (\`benches/results/budget-scale-before.json\`); seeds fixed, other seeds move
goodput by ±0.05; a hostile run's goodput is mostly its restarts' (a restarted table grants nothing new for one
TTL). The origin peak never exceeds the budget (asserted at every admission); the most permits counted for an
isolate evicted longer ago than its lease can outlive it (stuck leases): ${Math.max(...rows.map((r) => r.stuck))}. A Durable Object's
soft limit is about 1,000 calls/s; the simulated object has no queue and no such limit (a real one past it answers
\`.overloaded\`, and its isolates fall back per \`unavailable\`), so the rows past 1,000 calls/s show the load the
object would be asked to carry, not what it would serve.

${table(["isolates", "run", "load", "origin peak", "goodput (before)", "one exact limit", "origin busy", "object calls / admitted", "object calls / s (peak 1 s)", "wait p50 / p99 ms", "refused: at share / no lease / waiting for the object / unreachable / local limit", "permits: in flight / idle leases / spare / evicted (before) / free / stranded"], body)}

${source("budget-scale.json", "budget-scale-before.json")}
`;
}

const HEAD = `# Benchmarks

<!-- Generated by scripts/benchmarks-md.mjs from benches/results/*.json: edit those (or the script), then run
     \`node scripts/benchmarks-md.mjs\`; \`bash scripts/test.sh docs\` fails when this file is stale. -->

Today's figures, per peer and per path. How each was reached (profiles, before/after runs, the reasons
behind each miss) is the dated lab notebook, [docs/benchmarks-log-2026.md](docs/benchmarks-log-2026.md).
Every figure comes from a 2-core VM (AMD EPYC under KVM) shared with other builds: ratios measured in one
process with alternating rounds are the figures to trust; absolute times move with the machine's load.
None of these benches is part of the test command.

## Running the benches

\`\`\`sh
node benches/run-all.mjs                     # every bench: native, node, fetch, size, e2e, cpu, fleet
node benches/run-all.mjs --quick             # a smoke run of each
node benches/run-all.mjs --skip native,e2e   # any of: native, node, fetch, size, e2e, cpu, fleet, tower
node benches/run-all.mjs --before 37a507e    # also that commit's build, in the same rounds (node, fetch, cpu)
node benches/run-all.mjs --build             # rebuild pkg/, dist/worker/ and benches/tower-wasm/pkg/ first
\`\`\`

Each table below names the command that produced it; the benches with \`--json FILE\` write the input file
of their table (\`benches/results/\`), the native one (\`cargo bench --bench core\`) prints only.
`;

/** Issues 23 and 24 in Node: the cost of criticality and of the rate check, against p-queue. */
function nodeClasses() {
  const rows = ["node-criticality.json", "node-rate.json"].flatMap((name) =>
    load(name).ratios.map((r) => [r.name, `**${f(r.value)}×**`, r.goal == null ? "none set" : `≤ ${r.goal} ${r.value <= r.goal ? "✓" : "✗"}`]),
  );
  return `## Node.js: criticality and the rate check

\`benches/node/criticality.mjs\` and \`benches/node/rate.mjs\` (harness.mjs: on-CPU ns/op, median of rotated rounds;
each ratio is the median of per-round ratios, so both sides of it ran in the same rounds). The rate case sets a rate
no call reaches, so it measures the check on a conforming call; p-queue's peer is \`intervalCap\` + \`interval\`.

${table(["ratio", "value", "goal"], rows)}

${source("node-criticality.json", "node-rate.json")}
`;
}

/** Issues 23 and 24 on workerd: the criticality flood, codel against fifo, the noisy tenant. */
function classes() {
  const parts = ["criticality.json", "codel.json", "tenants.json"].map(
    (name) => `${renderBench(load(name), { brief: true })}\n\n${source(name)}\n`,
  );
  return `## workerd: criticality, codel and the noisy tenant\n\n${parts.join("\n")}`;
}

const TAIL = `## Benches with no figures here yet

\`node benches/e2e/fleet.mjs\` (three gateway isolates: per-isolate limits against the fleet budget),
\`node benches/adaptive/node-sim.mjs --limiters 3\` (independent limiters in front of one simulated origin),
\`node benches/e2e/rss.mjs\` (workerd RSS growth and shed latency per level; last figures 2026-11-30 in the log) and
\`node benches/soak/soak.mjs\` (the soak; its 10 s form runs in the test command, suite \`soak_smoke\`). Each takes
\`--json FILE\`; to add its table, commit the file under \`benches/results/\`, give it an entry in
\`benches/results/index.json\` and a section in \`scripts/benchmarks-md.mjs\`.
`;

export function render() {
  return [HEAD, core(), node(), nodeFetch(), size(), e2e(), cpu(), nodeSim(), budget(), budgetScale(), nodeClasses(), classes(), TAIL].join("\n");
}

const text = render();
if (process.argv.includes("--check")) {
  let current = "";
  try {
    current = readFileSync(TARGET, "utf8");
  } catch {
    current = "";
  }
  // Without the history to tell, the staleness sentences are left out of the comparison.
  const same = stalenessUnknown ? withoutStaleness(current) === withoutStaleness(text) : current === text;
  if (stalenessUnknown) console.log("BENCHMARKS.md: no git history for some builds here; their staleness is not checked");
  if (!same) {
    const a = current.split("\n");
    const b = text.split("\n");
    const i = a.findIndex((line, k) => line !== b[k]);
    const at = i < 0 ? Math.min(a.length, b.length) : i;
    console.error(`BENCHMARKS.md is not what scripts/benchmarks-md.mjs makes of benches/results/ (first difference at line ${at + 1}):`);
    console.error(`  file:      ${JSON.stringify(a[at] ?? "<end of file>")}`);
    console.error(`  generated: ${JSON.stringify(b[at] ?? "<end of file>")}`);
    console.error("Run `node scripts/benchmarks-md.mjs` and commit the result.");
    process.exit(1);
  }
  console.log("BENCHMARKS.md matches benches/results/");
} else {
  writeFileSync(TARGET, text);
  console.log(`wrote BENCHMARKS.md (${text.split("\n").length} lines)`);
}
