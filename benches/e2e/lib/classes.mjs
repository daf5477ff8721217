// Loads made of several classes of traffic (criticality levels, tenants) and
// their figures per class. Each stream is its own open-loop Poisson process
// (lib/arrivals.mjs smooth: its own seed, its own keep-alive sockets, its own
// path and headers), as separate clients would be: one class's backlog at
// the client never delays another's requests.
import { smooth } from "./arrivals.mjs";
import { percentile } from "./measure.mjs";

/**
 * Runs `streams` ([{ name, class, rate (req/s), path, headers }]) side by
 * side for `seconds`. Resolves to { windowMs, streams: [{ name, class, rate,
 * sent, errors, timeouts, unfinished }], responses }, where each response
 * (lib/arrivals.mjs) also carries its `stream` and `class`, and the JSON
 * `reason` of a non-2xx answer.
 */
export async function mixedLoad(url, streams, seconds, { seed = 1, onStart } = {}) {
  const active = streams.filter((s) => s.rate > 0);
  const loads = await Promise.all(
    active.map((s, i) =>
      smooth(url, s.rate, seconds, { seed: seed + 7919 * i, path: s.path, headers: s.headers, reasons: true, onStart: i === 0 ? onStart : undefined }),
    ),
  );
  const out = { windowMs: seconds * 1000, streams: [], responses: [] };
  loads.forEach((load, i) => {
    const { name, class: cls, rate } = active[i];
    out.streams.push({ name, class: cls, rate, sent: load.sent, errors: load.errors, timeouts: load.timeouts, unfinished: load.unfinished });
    for (const r of load.responses) out.responses.push({ ...r, stream: name, class: cls });
  });
  return out;
}

const is2xx = (r) => r.status >= 200 && r.status < 300;

/** Counts of `xs` by `key(x)`, as a plain object. */
function countBy(xs, key) {
  const out = {};
  for (const x of xs) {
    const k = key(x);
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

/** Goodput (2xx ÷ sent) and the 2xx p99 of one set of streams and their responses. */
function goodputOf(streams, responses) {
  const sent = streams.reduce((n, s) => n + s.sent, 0);
  const ok = responses.filter(is2xx);
  const ms = ok.map((r) => r.ms).sort((a, b) => a - b);
  return { sent, ok: ok.length, goodput: sent > 0 ? ok.length / sent : NaN, p50: percentile(ms, 50), p99: percentile(ms, 99) };
}

/**
 * Figures of class `cls` of `load` (from mixedLoad): what it offered
 * (`offeredRps`), goodput as a fraction of what it sent (every request sent
 * in the window, answered when it may: a request never answered counts as
 * lost), 2xx/s (answers completed within the window), the 2xx latency p50/p99, the count of each status and of
 * each refusal `reason` ("503 limit", "429 fair_share", ...), the requests
 * lost (errors, client timeouts, unfinished), and its worst stream (the
 * lowest goodput and the highest p99 over the class's streams: the worst
 * quiet tenant).
 */
export function classFigures(load, cls) {
  const streams = load.streams.filter((s) => s.class === cls);
  const responses = load.responses.filter((r) => r.class === cls);
  const total = goodputOf(streams, responses);
  const perStream = streams.map((s) => goodputOf([s], responses.filter((r) => r.stream === s.name)));
  const p99s = perStream.map((s) => s.p99).filter(Number.isFinite);
  return {
    offeredRps: streams.reduce((n, s) => n + s.rate, 0),
    ...total,
    okRps: responses.filter((r) => is2xx(r) && r.at <= load.windowMs).length / (load.windowMs / 1000),
    statuses: countBy(responses, (r) => r.status),
    reasons: countBy(responses.filter((r) => !is2xx(r)), (r) => `${r.status} ${r.reason ?? "?"}`),
    lost: streams.reduce((n, s) => n + s.errors + s.timeouts + s.unfinished, 0),
    worstGoodput: Math.min(...perStream.map((s) => s.goodput)),
    worstP99: p99s.length > 0 ? Math.max(...p99s) : NaN,
  };
}

/** The class names of `load`, in the order of its streams. */
export function classesOf(load) {
  return [...new Set(load.streams.map((s) => s.class))];
}

/** The answers of `classes` (classFigures by name) outside `contract` (a Set of statuses), lost requests included. */
export function outsideContract(classes, contract) {
  let n = 0;
  for (const c of Object.values(classes)) {
    n += c.lost;
    for (const [status, count] of Object.entries(c.statuses)) if (!contract.has(Number(status))) n += count;
  }
  return n;
}
