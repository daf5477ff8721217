// The two arrival processes of the bench, both sending GET /aggregate:
//
// - smooth: open-loop Poisson arrivals from a seeded generator of our own
//   (mulberry32, exponential gaps), over keep-alive connections
//   (node:http Agent). Each request's latency is measured from the time it
//   was *scheduled*, so a late timer or a client-side wait counts (no
//   coordinated omission). After the window, requests still running get
//   DRAIN_MS more, then are aborted and counted as `unfinished`.
// - bursty: autocannon 8's `overallRate`, which releases each connection's
//   quota at the start of each second; the rate is split over STAGGER
//   instances started 1000/STAGGER ms apart: bursts 10 times a second. The
//   window is measured once all of them run (the ramp is left out).
//
// Both resolve to { sent, errors, timeouts, unfinished, windowMs (how long
// the load was offered), responses }, where
// each response is { status, ms, at } (`at`: completion, ms after the start).
// smooth also takes `path` (default /aggregate) and `headers` for every
// request, and with `reasons` reads each non-2xx body and keeps its JSON
// `reason` (the gateway's "limit", "displaced", "fair_share", ...) as
// `reason` on the response (lib/classes.mjs mixes such streams).
import { Agent, request } from "node:http";
import autocannon from "autocannon";
// The dashboard's seeded generator (mulberry32), uniform in [0, 1).
import { rng as mulberry32 } from "../../../www/sim.js";

const TIMEOUT_MS = 10_000;
const DRAIN_MS = 3_000;
/** autocannon instances per bursty load, started 1000 / STAGGER ms apart. */
export const STAGGER = 10;
/** Sockets of a load, in all (split over the instances for bursty ones). */
export const CONNECTIONS = 200;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Open-loop Poisson arrivals at `rate`/s for `seconds` (see the header). */
export async function smooth(url, rate, seconds, { seed = 1, onStart, path = "/aggregate", headers = {}, reasons = false } = {}) {
  const target = new URL(path, url);
  // At most CONNECTIONS sockets, as many as autocannon gets: beyond them a
  // request waits in the agent (and that wait counts in its latency).
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const random = mulberry32(seed);
  const out = { sent: 0, errors: 0, timeouts: 0, unfinished: 0, responses: [] };
  const running = new Set();
  const t0 = performance.now();
  onStart?.(t0);
  const send = (scheduled) => {
    out.sent++;
    const req = request(
      { agent, host: target.hostname, port: target.port, path: target.pathname, method: "GET", headers },
      (res) => {
        const keepBody = reasons && (res.statusCode < 200 || res.statusCode >= 300);
        let body = "";
        if (keepBody) res.setEncoding("utf8").on("data", (chunk) => (body += chunk));
        else res.resume();
        res.on("end", () => {
          running.delete(req);
          const now = performance.now();
          const response = { status: res.statusCode, ms: now - scheduled, at: now - t0 };
          if (keepBody) response.reason = reasonOf(body);
          out.responses.push(response);
        });
      },
    );
    running.add(req);
    req.setTimeout(TIMEOUT_MS, () => req.destroy(new Error("timeout")));
    req.on("error", (error) => {
      if (!running.delete(req)) return;
      if (error.message === "timeout") out.timeouts++;
      else out.errors++;
    });
    req.end();
  };
  const end = t0 + seconds * 1000;
  let next = t0 + (-Math.log(1 - random()) / rate) * 1000;
  while (next < end) {
    const now = performance.now();
    // Fire everything that is due (a late timer sends its backlog at once).
    while (next <= now && next < end) {
      send(next);
      next += (-Math.log(1 - random()) / rate) * 1000;
    }
    await sleep(Math.max(0, Math.min(next, end) - performance.now()));
  }
  out.windowMs = seconds * 1000;
  const drainEnd = performance.now() + DRAIN_MS;
  while (running.size > 0 && performance.now() < drainEnd) await sleep(20);
  out.unfinished = running.size;
  for (const req of [...running]) {
    running.delete(req);
    req.destroy();
  }
  agent.destroy();
  return out;
}

/** The `reason` of a JSON error body (else its `error`, else null). */
function reasonOf(body) {
  try {
    const parsed = JSON.parse(body);
    return parsed.reason ?? parsed.error ?? null;
  } catch {
    return null;
  }
}

/**
 * autocannon bursts at `rate`/s (see the header). Instance i starts at
 * i × 1000/STAGGER ms and runs `seconds` + 1 s, so all of them run during
 * the measured window, which opens when the last one has started: `at` and
 * `onStart` count from there, and the window is `seconds` long.
 */
export async function bursty(url, rate, seconds, { onStart } = {}) {
  const out = { sent: 0, errors: 0, timeouts: 0, unfinished: 0, responses: [], windowMs: seconds * 1000 };
  const t0 = performance.now() + ((STAGGER - 1) * 1000) / STAGGER;
  const opening = setTimeout(() => onStart?.(t0), Math.max(0, t0 - performance.now()));
  const instances = [];
  for (let i = 0; i < STAGGER; i++) {
    const share = shareOf(rate, i);
    if (share === 0) continue;
    if (i > 0) await sleep(Math.max(0, t0 - ((STAGGER - 1 - i) * 1000) / STAGGER - performance.now()));
    instances.push(
      autocannonShare(url, share, seconds + 1, TIMEOUT_MS / 1000, (status, ms) =>
        out.responses.push({ status, ms, at: performance.now() - t0 }),
      ),
    );
  }
  const results = await Promise.all(instances);
  clearTimeout(opening);
  for (const result of results) {
    out.sent += result.requests.sent;
    out.errors += result.errors;
    out.timeouts += result.timeouts;
  }
  return out;
}

/** The share of rate `i` of STAGGER instances gets (the remainder goes to the first ones). */
export function shareOf(rate, i) {
  return Math.floor(rate / STAGGER) + (i < rate % STAGGER ? 1 : 0);
}

/**
 * One autocannon instance sending GET /aggregate on `url` at `share` req/s
 * for `seconds` (over at most CONNECTIONS / STAGGER connections); calls
 * `onResponse(status, ms)` per answer and resolves with autocannon's result.
 */
export function autocannonShare(url, share, seconds, timeoutS, onResponse) {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: new URL("/aggregate", url).href,
        connections: Math.min(share, CONNECTIONS / STAGGER),
        overallRate: share,
        duration: seconds,
        timeout: timeoutS,
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
    if (onResponse) instance.on("response", (_client, status, _bytes, ms) => onResponse(status, ms));
  });
}

export const ARRIVALS = { smooth, bursty };
