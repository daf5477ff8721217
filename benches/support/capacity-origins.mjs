// Origin servers with a fixed capacity, shared by the e2e bench
// (benches/e2e/origin.mjs) and the soak (benches/soak/origins.mjs), each run
// as a child process (own event loop, own core).
//
// An origin serves at most `capacity` requests at once, each after
// `latencyMs`, and queues the rest (FIFO, unbounded): a backend whose
// latency grows with its queue. A request whose client goes away leaves the
// queue or frees its slot at once, so aborted calls do not eat capacity.
// Optional deterministic faults, by arrival count: every `failEvery`-th
// request answers 500, every `slowEvery`-th takes `slowMs`. Bodies carry a
// Content-Length; `bodyBytes` sizes a text body, otherwise a small JSON
// document.
//
// Protocol with the parent: sends { ports: { name: port, ... } } once
// listening; answers "stats" with { stats: { name: { arrived, served,
// failed, aborted, peakActive, peakQueued, active, queued } } } and "reset"
// (counters zeroed, peaks restarted from now) with { reset: true }; exits
// when the parent disconnects. Stats add `capacity` (slots now) and the
// time-weighted `meanActive` / `meanQueued` since the last reset; the
// message { capacity: n } sets every origin's slots to n (answered with
// { capacity: n }), e.g. to halve the capacity mid-run.
import { createServer } from "node:http";

/** Starts one origin on 127.0.0.1; resolves to `{ counters, server, port }`. */
function startOrigin(name, spec) {
  const { capacity, latencyMs, failEvery = 0, slowEvery = 0, slowMs = 0, bodyBytes = 0 } = spec;
  const o = { arrived: 0, served: 0, failed: 0, aborted: 0, peakActive: 0, peakQueued: 0, active: 0, queued: 0 };
  // Time integrals of `active` and `queued` (slot-ms, waiter-ms) since the
  // last reset: their means over a run are the origin's concurrency and queue.
  const area = { since: performance.now(), at: performance.now(), activeMs: 0, queuedMs: 0 };
  const integrate = () => {
    const now = performance.now();
    area.activeMs += o.active * (now - area.at);
    area.queuedMs += o.queued * (now - area.at);
    area.at = now;
  };
  o.capacity = capacity;
  const queue = [];
  const ok = bodyBytes > 0 ? Buffer.alloc(bodyBytes, "f") : Buffer.from(JSON.stringify({ origin: name, ok: true }));
  const failed = Buffer.from(JSON.stringify({ origin: name, error: "injected" }));

  const start = (job) => {
    integrate();
    o.active++;
    o.peakActive = Math.max(o.peakActive, o.active);
    job.timer = setTimeout(() => {
      job.timer = null;
      integrate();
      o.active--;
      const body = job.fail ? failed : ok;
      if (job.fail) o.failed++;
      o.served++;
      job.res.writeHead(job.fail ? 500 : 200, {
        "content-type": bodyBytes > 0 && !job.fail ? "text/plain" : "application/json",
        "content-length": body.length,
      });
      job.res.end(body);
      next();
    }, job.slow ? slowMs : latencyMs);
  };
  const next = () => {
    while (o.active < o.capacity && queue.length > 0) {
      start(queue.shift());
      o.queued = queue.length;
    }
  };
  const server = createServer((req, res) => {
    o.arrived++;
    const n = o.arrived;
    const job = {
      res,
      timer: undefined,
      fail: failEvery > 0 && n % failEvery === 0,
      slow: slowEvery > 0 && n % slowEvery === Math.floor(slowEvery / 2),
    };
    req.resume();
    res.on("close", () => {
      if (res.writableFinished) return;
      integrate();
      o.aborted++;
      if (job.timer) {
        clearTimeout(job.timer);
        job.timer = null;
        o.active--;
        next();
      } else if (job.timer === undefined) {
        const i = queue.indexOf(job);
        if (i >= 0) queue.splice(i, 1);
        o.queued = queue.length;
      }
    });
    integrate();
    queue.push(job);
    o.queued = queue.length;
    o.peakQueued = Math.max(o.peakQueued, queue.length - Math.max(0, o.capacity - o.active));
    next();
  });
  server.keepAliveTimeout = 30_000;
  /** The means since the last reset, and a reset of the integrals. */
  const means = () => {
    integrate();
    const ms = Math.max(1, area.at - area.since);
    return { meanActive: area.activeMs / ms, meanQueued: area.queuedMs / ms };
  };
  const resetArea = () => {
    area.since = area.at = performance.now();
    area.activeMs = area.queuedMs = 0;
  };
  /** Changes the number of slots; queued requests start at once if it rose. */
  const setCapacity = (n) => {
    integrate();
    o.capacity = n;
    next();
  };
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ counters: o, server, port: server.address().port, means, resetArea, setCapacity }),
    ),
  );
}

/** Serves `specs` ({ name: spec }) and talks to the parent process. */
export async function serveToParent(specs) {
  const names = Object.keys(specs);
  const started = await Promise.all(names.map((name) => startOrigin(name, specs[name])));
  const each = (f) => Object.fromEntries(names.map((name, i) => [name, f(started[i].counters, started[i])]));
  process.send({ ports: each((_, s) => s.port) });
  process.on("message", (message) => {
    if (message === "stats") process.send({ stats: each((o, s) => ({ ...o, ...s.means() })) });
    else if (message === "reset") {
      for (const { counters: o, resetArea } of started) {
        o.arrived = o.served = o.failed = o.aborted = 0;
        o.peakActive = o.active;
        o.peakQueued = 0;
        resetArea();
      }
      process.send({ reset: true });
    } else if (typeof message?.capacity === "number") {
      for (const { setCapacity } of started) setCapacity(message.capacity);
      process.send({ capacity: message.capacity });
    }
  });
  process.on("disconnect", () => process.exit(0));
}
