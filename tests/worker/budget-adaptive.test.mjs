// The adaptive fleet limit (budget.adaptive) on real workerd: three gateway
// isolates in front of one origin with 2 slots that queues its excess; the
// object runs gradient2 over the holders' reports and GET /__edgeshed/budget
// shows the limit it chose.
import { after as afterAll, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { startOrigin } from "./support/origin.mjs";
import { eventually, startFleet } from "./support/fleet.mjs";

/** An origin behaviour with `slots` slots of `ms` each, queueing the rest (FIFO). */
function slots(n, ms) {
  let busy = 0;
  const queue = [];
  const next = () => {
    while (busy < n && queue.length > 0) {
      busy += 1;
      const run = queue.shift();
      setTimeout(() => {
        busy -= 1;
        run();
        next();
      }, ms);
    }
  };
  return (_req, res) =>
    new Promise((resolve) => {
      queue.push(() => {
        if (!res.destroyed) {
          res.writeHead(200, { "content-type": "application/json" });
          res.end('{"ok":1}');
        }
        resolve();
      });
      next();
    });
}

describe("fleet budget: adaptive fleet limit", () => {
  let users, fleet;
  before(async () => {
    users = await startOrigin("users");
    users.behave(slots(2, 20));
    fleet = await startFleet({
      statsPublic: true,
      origins: {
        users: {
          url: users.url,
          maxInFlight: 8,
          maxQueue: 0,
          timeoutMs: 400,
          budget: { leaseTtlMs: 1000, adaptive: { algorithm: "gradient2", initialLimit: 16, minLimit: 1, maxLimit: 64 } },
        },
      },
      routes: [{ path: "/aggregate", fanout: [{ origin: "users", path: "/u", required: true }] }],
    });
  });
  afterAll(async () => {
    await fleet?.dispose();
    await users?.close();
  });

  // Idle without a lease, an isolate would admit 0 under it, but refuses
  // nothing: its next request asks for up to its local limit. Stats and
  // metrics show that, not a "limit": 0 that looks broken (issue 33, 7).
  const idleShows = async (i) => {
    const users = (await fleet.stats(i)).origins.users;
    assert.equal(users.leased, 0, JSON.stringify(users));
    assert.equal(users.limit, 8, `the local limit it would ask for: ${JSON.stringify(users)}`);
    assert.equal(users.reserve, null, "no route names a criticality: no reserve");
    assert.deepEqual(users.ceilings, { critical: 8, default: 8, sheddable: 8 });
    const metrics = await fleet.metrics(i);
    assert.match(metrics, /^edgeshed_limit\{scope="origin:users"\} 8$/m);
    assert.match(metrics, /^edgeshed_ceiling\{scope="origin:users",criticality="sheddable"\} 8$/m);
  };

  test("idle before any request: stats and metrics show the lease it would ask for (its local limit), not 0", async () => {
    for (const i of [0, 1, 2]) await idleShows(i);
  });

  test("the object moves the fleet limit from the holders' reports; /__edgeshed/budget shows it, stats the effective limit", async (t) => {
    const seen = new Set();
    let stop = false;
    const client = async (i) => {
      while (!stop) await fleet.get(i % 3, "/aggregate");
    };
    const clients = Array.from({ length: 12 }, (_, i) => client(i));
    try {
      const { value } = await eventually(
        async () => {
          const view = (await fleet.budget()).origins.users;
          seen.add(view.limit);
          return view;
        },
        // after the startup drain (limit 1) it starts at 16, then comes
        // down towards the origin's 2 slots
        (view) => seen.has(16) && view.limit <= 4 && view.limit > 1,
        { timeoutMs: 20_000, what: "the fleet limit came down from its initial 16 to at most 4" },
      );
      assert.equal(value.learning, false);
      for (const limit of seen) assert.ok(limit >= 1 && limit <= 64, `limit ${limit} within [1, 64]`);
      const stats = await Promise.all([0, 1, 2].map((i) => fleet.stats(i)));
      for (const s of stats) assert.ok(s.origins.users.limit <= 8, JSON.stringify(s.origins.users));
      t.diagnostic(`fleet limits seen: ${[...seen].sort((a, b) => a - b).join(", ")}; origin peak ${users.peak}`);
    } finally {
      stop = true;
      await Promise.all(clients);
    }
  });

  test("idle again once its lease is given back: the local limit again, not 0", async () => {
    // (a give-back under way still shows the lease it may use: 0)
    await eventually(
      async () => (await fleet.stats(0)).origins.users,
      (users) => users.leased === 0 && users.limit === 8,
      { timeoutMs: 5_000, what: "gateway 0 gave its lease back, and shows limit 8" },
    );
    await idleShows(0);
  });

  test("budget.adaptive and budget.maxInFlight together are a configuration error", async () => {
    const broken = await startFleet({
      statsToken: "t",
      origins: {
        users: { url: users.url, budget: { maxInFlight: 4, adaptive: { algorithm: "vegas" } } },
      },
      routes: [{ path: "/aggregate", fanout: [{ origin: "users", path: "/u" }] }],
    }, { gateways: 1 });
    try {
      const r = await broken.get(0, "/aggregate");
      assert.equal(r.status, 500, r.text);
      assert.deepEqual(r.json, { error: "misconfigured" });
      const details = await broken.get(0, "/__edgeshed/stats", { headers: { authorization: "Bearer t" } });
      assert.match(details.json.message, /origins\.users\.budget: maxInFlight and adaptive are both given/);
    } finally {
      await broken.dispose();
    }
  });
});
