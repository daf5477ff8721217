// Overload: 200 concurrent requests against a required origin with
// maxInFlight 4, maxQueue 4, queueTimeoutMs 50 and 100 ms latency.
import { after as afterAll, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { answer, startOrigin } from "./support/origin.mjs";
import { idle, startWorker } from "./support/worker.mjs";

describe("overload", () => {
  let users, recs, worker;
  before(async () => {
    users = await startOrigin("users");
    recs = await startOrigin("recs");
    users.behave(answer({ id: 1 }, { delayMs: 100 }));
    recs.behave(answer({ items: [] }, { delayMs: 5 }));
    worker = await startWorker({
      statsPublic: true, // the test reads /__edgeshed/*
      retryAfterSeconds: 1,
      origins: {
        users: { url: users.url, maxInFlight: 4, maxQueue: 4, queueTimeoutMs: 50, timeoutMs: 2000 },
        recs: { url: recs.url, maxInFlight: 2, maxQueue: 0 },
      },
      routes: [
        {
          path: "/aggregate",
          fanout: [
            { origin: "users", path: "/u", required: true },
            { origin: "recs", path: "/r", required: false },
          ],
        },
      ],
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await Promise.all([users, recs].map((o) => o?.close()));
  });

  test("200 concurrent requests: the origin never sees more than 4 at once; only 200s and 503s; all released", async (t) => {
    const N = 200;
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: N }, () =>
        worker.get("/aggregate").catch((error) => ({ status: `threw ${error.message}` })),
      ),
    );
    const took = Date.now() - started;
    const byStatus = {};
    for (const r of answers) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
    const ok = byStatus[200] ?? 0;
    const overloaded = byStatus[503] ?? 0;
    assert.equal(ok + overloaded, N, `only 200 and 503: ${JSON.stringify(byStatus)}`);
    assert.ok(ok >= 4, `some succeeded: ${JSON.stringify(byStatus)}`);
    assert.ok(overloaded > 0, `some were shed: ${JSON.stringify(byStatus)}`);
    assert.ok(users.peak <= 4, `users saw at most 4 concurrent calls, saw ${users.peak}`);
    assert.ok(recs.peak <= 2, `recs saw at most 2 concurrent calls, saw ${recs.peak}`);
    const reasons = { limit: 0, queue_timeout: 0 };
    for (const r of answers) {
      if (r.status === 503) {
        assert.deepEqual(Object.keys(r.json).sort(), ["error", "reason", "scope"], r.text);
        assert.deepEqual([r.json.error, r.json.scope], ["overloaded", "origin:users"]);
        assert.ok(r.json.reason in reasons, r.text);
        reasons[r.json.reason] += 1;
        assert.equal(r.headers.get("retry-after"), "1");
      } else {
        assert.deepEqual(r.json.results.users, { id: 1 });
        assert.deepEqual(r.json.degraded, r.json.results.recs ? [] : ["recs"]);
      }
    }

    const stats = await worker.until(idle, { what: "every scope idle after the burst" });
    for (const [name, scope] of Object.entries({ global: stats.global, ...stats.origins })) {
      assert.equal(scope.inFlight, 0, `${name} inFlight`);
      assert.equal(scope.queued, 0, `${name} queued`);
    }
    assert.equal(stats.global.admitted, N);
    assert.equal(stats.origins.users.admitted, ok, "one users admission per 200");
    assert.equal(stats.origins.users.shed + stats.origins.users.queueTimeouts, overloaded);
    // the reason of each 503 says which limit refused it
    assert.deepEqual(reasons, { limit: stats.origins.users.shed, queue_timeout: stats.origins.users.queueTimeouts });
    assert.equal(users.requests.length, ok);
    assert.equal(users.inFlight, 0);
    t.diagnostic(`overload: ${JSON.stringify(byStatus)} in ${took} ms; users peak ${users.peak}`);

    // And the gateway still serves normally afterwards.
    const after = await worker.get("/aggregate");
    assert.equal(after.status, 200, after.text);
  });
});
