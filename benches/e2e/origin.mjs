// Origin servers with a fixed capacity, for benches/e2e/run.mjs: each
// handles at most `concurrency` requests at once, answering each after
// `latencyMs`, and queues the rest (unbounded, FIFO) — a backend whose
// latency grows with its queue. A request whose client goes away is dropped
// (from the queue, or its slot is freed at once), so aborted fan-out calls do
// not eat capacity. Runs as a child process (its own event loop and core):
//
//   fork("benches/e2e/origin.mjs", [JSON.stringify({ names: ["a", "b"], concurrency: 4, latencyMs: 50 })])
//
// Messages: it sends { ports: { a: 1234, ... } } once listening; answers
// "stats" with { stats: { a: { served, aborted, peakActive, peakQueued }, ... } }
// and "reset" by zeroing the counters.
import { createServer } from "node:http";

const { names, concurrency, latencyMs } = JSON.parse(process.argv[2]);

function origin(name) {
  const queue = [];
  const o = { active: 0, served: 0, aborted: 0, peakActive: 0, peakQueued: 0 };
  const body = JSON.stringify({ origin: name, ok: true });
  const start = (job) => {
    o.active++;
    if (o.active > o.peakActive) o.peakActive = o.active;
    job.timer = setTimeout(() => {
      job.timer = null;
      o.active--;
      o.served++;
      job.res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      job.res.end(body);
      next();
    }, latencyMs);
  };
  const next = () => {
    while (o.active < concurrency && queue.length > 0) start(queue.shift());
  };
  const server = createServer((req, res) => {
    const job = { res, timer: undefined };
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
      }
    });
    req.resume();
    if (o.active < concurrency) start(job);
    else {
      queue.push(job);
      if (queue.length > o.peakQueued) o.peakQueued = queue.length;
    }
  });
  server.keepAliveTimeout = 30_000;
  o.server = server;
  return o;
}

const origins = Object.fromEntries(names.map((n) => [n, origin(n)]));
const ports = {};
for (const [name, o] of Object.entries(origins)) {
  await new Promise((resolve) => o.server.listen(0, "127.0.0.1", resolve));
  ports[name] = o.server.address().port;
}
process.send({ ports });
process.on("message", (m) => {
  if (m === "stats") {
    const stats = {};
    for (const [name, o] of Object.entries(origins)) {
      const { served, aborted, peakActive, peakQueued } = o;
      stats[name] = { served, aborted, peakActive, peakQueued };
    }
    process.send({ stats });
  } else if (m === "reset") {
    for (const o of Object.values(origins)) {
      o.served = o.aborted = 0;
      o.peakActive = o.active;
      o.peakQueued = 0;
    }
    process.send({ reset: true });
  }
});
process.on("disconnect", () => process.exit(0));
