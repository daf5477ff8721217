// Origin servers with a fixed capacity for benches/soak/soak.mjs, run as a
// child process (own event loop, own core). Each origin serves at most
// `capacity` requests at once, each after `latencyMs`, and queues the rest
// (FIFO); a request whose client goes away leaves the queue or frees its
// slot at once. Deterministic faults, by arrival count:
//   every `failEvery`-th request answers 500 (fan-out: the worker's 502),
//   every `slowEvery`-th request takes `slowMs` (past the route's deadline or
//   the origin's timeoutMs: the worker's 504).
// Bodies carry a Content-Length; `bodyBytes` sizes a text body (proxy
// routes), otherwise a small JSON document.
//
//   fork("benches/soak/origins.mjs", [JSON.stringify({ users: { capacity: 4, latencyMs: 25, ... }, ... })])
//
// Sends { ports: { users: 1234, ... } } once listening; answers "stats" with
// { stats: { users: { arrived, served, failed, aborted, peakActive, peakQueued, active, queued } } }.
import { createServer } from "node:http";

const specs = JSON.parse(process.argv[2]);

function origin(name, spec) {
  const { capacity, latencyMs, failEvery = 0, slowEvery = 0, slowMs = 0, bodyBytes = 0 } = spec;
  const o = { arrived: 0, served: 0, failed: 0, aborted: 0, peakActive: 0, peakQueued: 0, active: 0, queued: 0 };
  const queue = [];
  const ok = bodyBytes > 0 ? Buffer.alloc(bodyBytes, "f") : Buffer.from(JSON.stringify({ origin: name, ok: true }));
  const failed = Buffer.from(JSON.stringify({ origin: name, error: "injected" }));

  const start = (job) => {
    o.active++;
    o.peakActive = Math.max(o.peakActive, o.active);
    job.timer = setTimeout(() => {
      job.timer = null;
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
    while (o.active < capacity && queue.length > 0) {
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
    queue.push(job);
    o.queued = queue.length;
    o.peakQueued = Math.max(o.peakQueued, queue.length - Math.max(0, capacity - o.active));
    next();
  });
  server.keepAliveTimeout = 30_000;
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve({ name, o, port: server.address().port })),
  );
}

const started = await Promise.all(Object.entries(specs).map(([name, spec]) => origin(name, spec)));
process.send({ ports: Object.fromEntries(started.map(({ name, port }) => [name, port])) });
process.on("message", (message) => {
  if (message === "stats") process.send({ stats: Object.fromEntries(started.map(({ name, o }) => [name, { ...o }])) });
});
process.on("disconnect", () => process.exit(0));
