// Adaptive origin limits in workerd: the limit an origin's algorithm sets
// (read from /__edgeshed/stats) falls when the origin overloads or slows
// down and rises when it recovers; and what counts as a drop. Load comes
// from closed-loop clients that run until a stats condition holds (bounded
// polling with a deadline, no fixed sleeps).
import { after as afterAll, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { answer, hang, startOrigin } from "./support/origin.mjs";
import { startWorker } from "./support/worker.mjs";

/** Runs `clients` closed loops of `path` until `condition(stats)` holds. */
async function drive(worker, path, clients, condition, { timeoutMs = 8000, what } = {}) {
  let done = false;
  const statuses = {};
  const started = Date.now();
  const loops = Array.from({ length: clients }, async () => {
    while (!done) {
      const response = await worker.fetch(path);
      await response.arrayBuffer();
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    }
  });
  try {
    const stats = await worker.until(condition, { timeoutMs, what });
    return { stats, statuses, ms: Date.now() - started };
  } finally {
    done = true;
    await Promise.all(loops);
  }
}

/** The `edgeshed_limit` gauge of `scope` in /__edgeshed/metrics. */
async function limitGauge(worker, scope) {
  const { text } = await worker.get("/__edgeshed/metrics");
  const line = text.split("\n").find((l) => l.startsWith(`edgeshed_limit{scope="${scope}"} `));
  return Number(line?.split(" ")[1]);
}

describe("adaptive origin limits", () => {
  let capped, paced, hung, worker;
  // `capped` serves at most `capacity` calls at once (20 ms each) and
  // answers 503 at once beyond it: an origin that sheds (AIMD's signal).
  let capacity = 2;
  // `paced` answers every call after `latencyMs`: an origin that slows down
  // (Gradient2's signal).
  let latencyMs = 10;
  before(async () => {
    [capped, paced, hung] = await Promise.all(["capped", "paced", "hung"].map((n) => startOrigin(n)));
    capped.behave(async (req, res, seen) => {
      if (capped.inFlight > capacity) return answer({ error: "busy" }, { status: 503 })(req, res, seen);
      return answer({ ok: true }, { delayMs: 20 })(req, res, seen);
    });
    paced.behave((req, res, seen) => answer({ ok: true }, { delayMs: latencyMs })(req, res, seen));
    hung.behave(hang());
    const queue = { maxQueue: 32, queueTimeoutMs: 2000 };
    worker = await startWorker({
      statsPublic: true,
      origins: {
        capped: { url: capped.url, adaptive: { algorithm: "aimd", initialLimit: 8, minLimit: 1, maxLimit: 16 }, ...queue },
        paced: { url: paced.url, adaptive: { algorithm: "gradient2", initialLimit: 8, minLimit: 1, maxLimit: 16 }, ...queue },
        // Two views of one hung origin: cut by the route's deadline, or by
        // the origin's own timeoutMs.
        patient: { url: hung.url, adaptive: { algorithm: "aimd", initialLimit: 8 }, timeoutMs: 5000 },
        strict: { url: hung.url, adaptive: { algorithm: "aimd", initialLimit: 8 }, timeoutMs: 30 },
      },
      routes: [
        { path: "/capped", fanout: [{ origin: "capped", path: "/c" }] },
        { prefix: "/paced/", origin: "paced" },
        { path: "/deadline", deadlineMs: 30, fanout: [{ origin: "patient", path: "/h" }] },
        { path: "/timeout", fanout: [{ origin: "strict", path: "/h" }] },
      ],
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await Promise.all([capped, paced, hung].map((o) => o?.close()));
  });

  test("aimd on a fan-out: falls while the origin answers 503, rises when it recovers", async (t) => {
    assert.equal((await worker.stats()).origins.capped.limit, 8, "starts at initialLimit");
    const fell = await drive(worker, "/capped", 12, (s) => s.origins.capped.limit <= 3, {
      what: "the capped origin's limit to fall to <= 3 (capacity 2)",
    });
    assert.ok(fell.statuses[502] > 0, `the origin's 503s reached the clients as 502: ${JSON.stringify(fell.statuses)}`);
    capacity = 12;
    const rose = await drive(worker, "/capped", 12, (s) => s.origins.capped.limit >= 8, {
      what: "the capped origin's limit to rise back to >= 8 (capacity 12)",
    });
    assert.equal(await limitGauge(worker, "origin:capped"), (await worker.stats()).origins.capped.limit, "the gauge shows the limit");
    t.diagnostic(`capped: fell to ${fell.stats.origins.capped.limit} in ${fell.ms} ms ${JSON.stringify(fell.statuses)}, rose to ${rose.stats.origins.capped.limit} in ${rose.ms} ms ${JSON.stringify(rose.statuses)}`);
  });

  test("gradient2 on a prefix route: falls when the origin slows down, rises when it is fast again", async (t) => {
    // The limit starts with a drain at minLimit (the no-load latency), then
    // slow-starts while the latency shows room. This machine's own pipeline
    // (clients, workerd, the origin server) slows down with concurrency too,
    // so the limit settles where the latency stops showing room: a few
    // calls, not the 16 of maxLimit.
    latencyMs = 10;
    assert.equal((await worker.stats()).origins.paced.limit, 8, "starts at initialLimit");
    await drive(worker, "/paced/x", 12, (s) => s.origins.paced.limit === 1, {
      timeoutMs: 15_000,
      what: "the first calls to drain the paced origin at minLimit",
    });
    const fast = await drive(worker, "/paced/x", 12, (s) => s.origins.paced.limit >= 4, {
      timeoutMs: 15_000,
      what: "the paced origin's limit to slow-start to >= 4 while it is fast (10 ms)",
    });
    const peak = fast.stats.origins.paced.limit;
    latencyMs = 150;
    const slow = await drive(worker, "/paced/x", 12, (s) => s.origins.paced.limit <= peak / 2, {
      timeoutMs: 15_000,
      what: `the paced origin's limit to fall to <= ${peak / 2} once it takes 150 ms`,
    });
    latencyMs = 10;
    const low = slow.stats.origins.paced.limit;
    const again = await drive(worker, "/paced/x", 12, (s) => s.origins.paced.limit >= low + 2, {
      timeoutMs: 15_000,
      what: `the paced origin's limit to rise back to >= ${low + 2} once it is fast again`,
    });
    assert.equal(again.statuses[200] > 0, true);
    t.diagnostic(
      `paced: ${peak} at 10 ms (${fast.ms} ms), ${low} at 150 ms (${slow.ms} ms), ` +
        `${again.stats.origins.paced.limit} at 10 ms again (${again.ms} ms)`,
    );
  });

  test("a call cut by the request's deadline is not a drop; one cut by the origin's timeoutMs is", async () => {
    for (let i = 0; i < 6; i++) {
      const r = await worker.get("/deadline");
      assert.equal(r.status, 504);
      assert.deepEqual(r.json, { error: "deadline" });
    }
    const strictBefore = (await worker.stats()).origins.strict.limit;
    for (let i = 0; i < 6; i++) {
      const r = await worker.get("/timeout");
      assert.equal(r.status, 504);
      assert.deepEqual(r.json, { error: "timeout", origin: "strict" });
    }
    const stats = await worker.until((s) => s.origins.patient.inFlight === 0 && s.origins.strict.inFlight === 0, {
      what: "the hung calls to be released",
    });
    assert.equal(stats.origins.patient.limit, 8, "the request's deadline does not move the origin's limit");
    assert.equal(strictBefore, 8);
    assert.ok(stats.origins.strict.limit <= 4, `six timeouts backed off from 8: ${stats.origins.strict.limit}`);
  });
});
