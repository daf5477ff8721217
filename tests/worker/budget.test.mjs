// The fleet budget on real workerd: three gateway isolates (the same
// script) share one EdgeshedBudget object per origin, in front of a real,
// slow origin that records its peak concurrency.
import { after as afterAll, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { after, answer, gate, startOrigin } from "./support/origin.mjs";
import { eventually, startFleet } from "./support/fleet.mjs";
import { idle, startWorker } from "./support/worker.mjs";

const TTL = 1000;

function fleetConfig(users, budget = {}) {
  return {
    statsPublic: true,
    retryAfterSeconds: 1,
    origins: {
      // Each isolate alone would admit 4: 12 across the fleet without a budget.
      users: { url: users.url, maxInFlight: 4, maxQueue: 0, timeoutMs: 5000, budget: { maxInFlight: 5, leaseTtlMs: TTL, ...budget } },
    },
    routes: [{ path: "/aggregate", fanout: [{ origin: "users", path: "/u", required: true }] }],
  };
}

/** Every gateway idle and holding no lease, and the object's count back to 0. */
async function allReleased(fleet) {
  const locals = await Promise.all(Array.from({ length: fleet.size }, (_, i) => fleet.stats(i)));
  const view = (await fleet.budget()).origins.users;
  return { locals, view, done: locals.every((s) => idle(s) && s.origins.users.leased === 0) && view.leased === 0 && view.holders === 0 };
}

describe("fleet budget: several isolates", () => {
  let users, fleet;
  before(async () => {
    users = await startOrigin("users");
    fleet = await startFleet(fleetConfig(users));
  });
  afterAll(async () => {
    await fleet?.dispose();
    await users?.close();
  });

  test("a burst spread over 3 isolates: the origin never sees more than budget.maxInFlight; the rest 503 origin:users; all released after", async (t) => {
    const g = gate();
    users.behave(after(g, answer({ id: 1 })));
    const N = 30;
    let answered = 0;
    const answers = Array.from({ length: N }, (_, i) =>
      fleet.get(i % fleet.size, "/aggregate").then((r) => {
        answered += 1;
        return r;
      }),
    );
    // While the origin holds every admitted call, all the others are answered.
    await eventually(() => ({ answered, held: g.waiting }), ({ answered, held }) => answered + held === N && held > 0, {
      what: "every request admitted (held at the origin) or answered",
    });
    assert.ok(g.waiting <= 5, `the origin holds at most 5 calls, holds ${g.waiting}`);
    const view = (await fleet.budget()).origins.users;
    assert.equal(view.limit, 5);
    assert.ok(view.leased <= 5 && view.leased >= g.waiting, `fleet view ${JSON.stringify(view)}`);
    assert.equal(view.learning, false);
    const leased = await Promise.all([0, 1, 2].map(async (i) => (await fleet.stats(i)).origins.users.leased));
    assert.ok(leased.reduce((a, b) => a + b, 0) <= 5, `isolates' leases ${leased}`);
    g.open();
    const results = await Promise.all(answers);
    const byStatus = {};
    for (const r of results) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
    assert.equal((byStatus[200] ?? 0) + (byStatus[503] ?? 0), N, JSON.stringify(byStatus));
    assert.ok(users.peak <= 5, `origin peak ${users.peak} <= budget 5`);
    assert.equal(byStatus[200], users.requests.length);
    for (const r of results.filter((r) => r.status === 503)) {
      assert.deepEqual(r.json, { error: "overloaded", scope: "origin:users" });
      assert.equal(r.headers.get("retry-after"), "1");
    }
    // Idle isolates give their permits back (or they expire): all counts 0.
    const { waitedMs } = await eventually(() => allReleased(fleet), (s) => s.done, {
      timeoutMs: 2 * TTL + 1000,
      what: "every local and fleet count back to 0",
    });
    t.diagnostic(`burst: ${JSON.stringify(byStatus)}, origin peak ${users.peak}, released ${waitedMs} ms after`);
    // The budget is spent through the local limiter: far fewer object calls than admissions.
    const metrics = await fleet.metrics(0);
    assert.match(metrics, /edgeshed_budget_calls_total\{origin="users"\} \d+/);
    assert.match(metrics, /edgeshed_budget_shed_total\{origin="users"\} \d+/);
  });

  test("a budgeted origin serves normally when the fleet has room, and /__edgeshed/stats shows the lease", async () => {
    users.reset();
    users.behave(answer({ id: 2 }));
    const r = await fleet.get(1, "/aggregate");
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.results.users, { id: 2 });
    const stats = await fleet.stats(1);
    assert.ok(stats.origins.users.leased >= 1, JSON.stringify(stats.origins.users));
    assert.equal(stats.origins.users.limit, 4);
  });
});

describe("fleet budget: configuration", () => {
  test("a budget binding absent from env answers 500 config naming origins.<name>.budget.binding", async () => {
    const worker = await startWorker({
      origins: { users: { url: "http://127.0.0.1:9", budget: { binding: "NO_SUCH_NAMESPACE", maxInFlight: 3 } } },
      routes: [{ path: "/aggregate", fanout: [{ origin: "users", path: "/u" }] }],
    });
    try {
      for (const path of ["/aggregate", "/__edgeshed/stats"]) {
        const r = await worker.get(path);
        assert.equal(r.status, 500, r.text);
        assert.equal(r.json.error, "config");
        assert.match(r.json.message, /origins\.users\.budget\.binding/);
        assert.match(r.json.message, /NO_SUCH_NAMESPACE/);
      }
    } finally {
      await worker.dispose();
    }
  });

  test("budget keys are checked with the other errors, all at once; unknown keys are rejected", async () => {
    const worker = await startWorker({
      origins: {
        users: {
          url: "http://127.0.0.1:9",
          maxInflight: 2,
          budget: { maxInflight: 3, leaseTtlMs: 50, unavailable: "drop", binding: "1bad" },
        },
        recs: { url: "http://127.0.0.1:9", budget: "EDGESHED_BUDGET" },
      },
    });
    try {
      const r = await worker.get("/aggregate");
      assert.equal(r.status, 500, r.text);
      for (const key of [
        "origins.users.maxInflight",
        "origins.users.budget.maxInflight",
        "origins.users.budget.maxInFlight is required",
        "origins.users.budget.leaseTtlMs",
        "origins.users.budget.unavailable",
        "origins.users.budget.binding",
        "origins.recs.budget must be an object",
      ]) {
        assert.ok(r.json.message.includes(key), `${key} in: ${r.json.message}`);
      }
    } finally {
      await worker.dispose();
    }
  });
});
