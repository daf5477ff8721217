// The fleet budget when things break, on real workerd: a holder dies with
// leases, the object loses its memory under load, the object cannot be
// reached (local and shed fallbacks, retry rules).
import { after as afterAll, describe, test } from "node:test";
import assert from "node:assert/strict";
import { after, answer, gate, startOrigin } from "./support/origin.mjs";
import { eventually, startFleet } from "./support/fleet.mjs";
import { startWorker } from "./support/worker.mjs";

const TTL = 1000;
const ALARM_MARGIN = 700; // the alarm, a renewal tick and a retry interval

function config(users, { local = 4, budget = {}, timeoutMs = 3000 } = {}) {
  return {
    statsPublic: true,
    origins: {
      users: { url: users.url, maxInFlight: local, maxQueue: 0, timeoutMs, budget: { maxInFlight: 4, leaseTtlMs: TTL, ...budget } },
    },
    routes: [{ path: "/aggregate", fanout: [{ origin: "users", path: "/u", required: true }] }],
  };
}

const metric = (text, name) => Number(text.match(new RegExp(`^${name}\\{origin="users"\\} (\\d+)$`, "m"))?.[1] ?? NaN);

describe("fleet budget faults", () => {
  const cleanup = [];
  afterAll(async () => {
    for (const dispose of cleanup.reverse()) await dispose();
  });
  const started = async (promise) => {
    const value = await promise;
    cleanup.push(() => (value.dispose ?? value.close).call(value));
    return value;
  };

  test("a holder dies with the whole budget leased: its permits come back within leaseTtlMs (+ alarm margin) and others use them", async (t) => {
    const users = await started(startOrigin("users"));
    const fleet = await started(startFleet(config(users)));
    const g = gate();
    users.behave(after(g, answer({ id: 1 })));
    const held = Array.from({ length: 4 }, () => fleet.get(0, "/aggregate"));
    await users.arrivals(4);
    assert.equal((await fleet.get(1, "/aggregate")).status, 503, "the fleet is full");
    assert.deepEqual((await fleet.budget(1)).origins.users, { limit: 4, leased: 4, holders: 1, learning: false });
    await fleet.kill(0);
    const killed = Date.now();
    g.open(); // its calls end; the dead isolate neither renews nor returns
    await Promise.all(held);
    users.behave(answer({ id: 2 }));
    const { waitedMs } = await eventually(() => fleet.get(1, "/aggregate"), (r) => r.status === 200, {
      timeoutMs: TTL + ALARM_MARGIN + 1000,
      what: "another isolate admitted after the dead holder's lease expired",
    });
    const since = Date.now() - killed;
    assert.ok(since <= TTL + ALARM_MARGIN, `permits back ${since} ms after the holder died (ttl ${TTL})`);
    // the dead holder's lease expired, and the live one, idle once its call
    // ended, gives its lease back at once
    await eventually(async () => (await fleet.budget(1)).origins.users, (view) => view.holders === 0 && view.leased === 0, {
      timeoutMs: 1000,
      what: "no lease left: the dead holder's expired, the idle live holder gave its back",
    });
    assert.ok(users.peak <= 4, `origin peak ${users.peak}`);
    t.diagnostic(`dead holder's permits used again ${since} ms after it died (polled ${waitedMs} ms)`);
    // leaseTtlMs 1000 < 2 x timeoutMs 3000 here: each isolate warns once.
    const warning = "origins.users.budget.leaseTtlMs (1000) should be at least twice origins.users.timeoutMs (3000)";
    await eventually(async () => fleet.logs.filter((l) => l.message.includes(warning)).length, (n) => n >= 2, {
      what: "the leaseTtlMs warning logged by the isolates that served",
    });
  });

  test("the object loses its memory under load: learning mode keeps the origin at or under the budget", async (t) => {
    const users = await started(startOrigin("users"));
    const fleet = await started(startFleet(config(users, { local: 2, timeoutMs: 10_000 })));
    const g = gate();
    // The first 4 calls are held; any later one (an over-admission) answers at once.
    const held4 = after(g, answer({ id: 1 }));
    const quick = answer({ id: 2 });
    users.behave((req, res, seen) => (users.requests.indexOf(seen.record) < 4 ? held4 : quick)(req, res, seen));
    const held = [0, 0, 1, 1].map((i) => fleet.get(i, "/aggregate"));
    await users.arrivals(4); // gw0 and gw1 hold 2 each: the whole budget
    assert.equal((await fleet.get(2, "/aggregate")).status, 503);
    await fleet.reset("users");
    const learning = (await fleet.budget(2)).origins.users.learning;
    // gw2 keeps asking through learning mode and after it: nothing is free.
    const statuses = new Set();
    const until = Date.now() + TTL * 1.6;
    while (Date.now() < until) {
      const r = await fleet.get(2, "/aggregate");
      statuses.add(r.status);
      assert.ok(users.peak <= 4, `origin peak ${users.peak}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    assert.deepEqual([...statuses], [503], "the third isolate is never admitted");
    assert.equal(learning, true, "the new instance was in learning mode");
    const view = (await fleet.budget(2)).origins.users;
    assert.deepEqual(view, { limit: 4, leased: 4, holders: 2, learning: false }, "leases re-registered from the holders' reports");
    g.open();
    for (const r of await Promise.all(held)) assert.equal(r.status, 200);
    assert.ok(users.peak <= 4, `origin peak ${users.peak} <= 4`);
    t.diagnostic(`after a reset: origin peak ${users.peak}, gw2 statuses ${[...statuses]}`);
  });

  test('unreachable object, "unavailable": "local": the isolate\'s own limit holds, counted; .retryable retried once on a new stub', async () => {
    const users = await started(startOrigin("users"));
    const worker = await started(
      startWorker(config(users, { local: 3, budget: { binding: "BROKEN_BUDGET", maxInFlight: 1 } }), {
        scriptPath: "tests/worker/support/budget-entry.mjs",
      }),
    );
    const g = gate();
    users.behave(after(g, answer({ id: 1 })));
    const held = [0, 1, 2].map(() => worker.get("/aggregate"));
    await users.arrivals(3); // above the fleet limit of 1: the fallback is local
    const shed = await worker.get("/aggregate");
    assert.equal(shed.status, 503, "the local limit still holds");
    assert.deepEqual(shed.json, { error: "overloaded", scope: "origin:users", reason: "limit" });
    g.open();
    for (const r of await Promise.all(held)) assert.equal(r.status, 200, r.text);
    const metrics = (await worker.get("/__edgeshed/metrics")).text;
    assert.ok(metric(metrics, "edgeshed_budget_fallbacks_total") >= 3, metrics);
    const calls = metric(metrics, "edgeshed_budget_calls_total");
    assert.ok(calls >= 1 && metric(metrics, "edgeshed_budget_lease_failures_total") === calls, metrics);
    const seen = (await worker.get("/__test/broken")).json.retryable;
    assert.deepEqual(seen, { calls: 2 * calls, stubs: 2 * calls }, "each call retried once, on a new stub");
    const view = (await worker.get("/__edgeshed/budget")).json.origins.users;
    assert.equal(view.error, "unavailable");
  });

  test('unreachable object, "unavailable": "shed": 503 origin:users, counted; .overloaded never retried', async () => {
    const users = await started(startOrigin("users"));
    const worker = await started(
      startWorker(config(users, { local: 3, budget: { binding: "OVERLOADED_BUDGET", unavailable: "shed" } }), {
        scriptPath: "tests/worker/support/budget-entry.mjs",
      }),
    );
    for (let i = 0; i < 3; i++) {
      const r = await worker.get("/aggregate");
      assert.equal(r.status, 503, r.text);
      assert.deepEqual(r.json, { error: "overloaded", scope: "origin:users", reason: "budget" });
    }
    assert.equal(users.requests.length, 0, "nothing reached the origin");
    const metrics = (await worker.get("/__edgeshed/metrics")).text;
    assert.ok(metric(metrics, "edgeshed_budget_fallbacks_total") >= 3, metrics);
    const calls = metric(metrics, "edgeshed_budget_calls_total");
    const seen = (await worker.get("/__test/broken")).json.overloaded;
    assert.deepEqual(seen, { calls, stubs: calls }, "an overloaded object is not retried");
  });

  test("a real object that throws .overloaded: never retried, the fallback applies (local admits, shed 503s), counted in budgetUnavailable", async () => {
    const users = await started(startOrigin("users"));
    const budget = { binding: "OVERLOADING_BUDGET", maxInFlight: 1, leaseTtlMs: TTL };
    const origin = (unavailable) => ({ url: users.url, maxInFlight: 3, maxQueue: 0, timeoutMs: 400, budget: { ...budget, unavailable } });
    const worker = await started(
      startWorker(
        {
          statsPublic: true,
          origins: { local: origin("local"), shed: origin("shed") },
          routes: [
            { path: "/local", fanout: [{ origin: "local", path: "/u", required: true }] },
            { path: "/shed", fanout: [{ origin: "shed", path: "/u", required: true }] },
          ],
        },
        {
          scriptPath: "tests/worker/support/budget-entry.mjs",
          durableObjects: { OVERLOADING_BUDGET: { className: "OverloadingBudget", useSQLite: true } },
        },
      ),
    );
    users.behave(answer({ id: 1 }));
    const N = 4;
    for (let i = 0; i < N; i++) {
      const local = await worker.get("/local");
      assert.equal(local.status, 200, `"local": the isolate's own limit admits (${local.text})`);
      const shed = await worker.get("/shed");
      assert.equal(shed.status, 503, shed.text);
      assert.deepEqual(shed.json, { error: "overloaded", scope: "origin:shed", reason: "budget" });
    }
    assert.equal(users.requests.length, N, "only the local fallback reached the origin");
    const stats = (await worker.get("/__edgeshed/stats")).json.origins;
    const metrics = (await worker.get("/__edgeshed/metrics")).text;
    const named = (name, o) => Number(metrics.match(new RegExp(`^${name}\\{origin="${o}"\\} (\\d+)$`, "m"))?.[1] ?? NaN);
    for (const o of ["local", "shed"]) {
      assert.equal(stats[o].budgetUnavailable, N, `${o}: every request decided by the fallback: ${JSON.stringify(stats[o])}`);
      assert.equal(named("edgeshed_budget_fallbacks_total", o), N, metrics);
      const calls = named("edgeshed_budget_calls_total", o);
      const seen = (await worker.get(`/__test/overloading?origin=${o}`)).json;
      // each lease call reached the object exactly once: none was retried
      assert.ok(calls >= 1, metrics);
      assert.equal(seen.lease, calls, `${o}: object saw ${JSON.stringify(seen)}, isolate made ${calls} lease calls`);
      assert.equal(named("edgeshed_budget_overloaded_total", o), calls + seen.watch, metrics);
      assert.equal(named("edgeshed_budget_lease_failures_total", o), calls, metrics);
    }
  });

  test("a watch that reaches the object after its holder's newer lease call (the two crossed) is answered at once and does not cancel that call", async () => {
    const users = await started(startOrigin("users"));
    const fleet = await started(startFleet(config(users), { gateways: 1 }));
    const host = await fleet.mf.getWorker("budget-host");
    const result = await (await host.fetch("http://edgeshed.test/__test/crossed?origin=crossed")).json();
    assert.deepEqual(result.watch, { contended: true }, "the stale watch, answered at once");
    assert.equal(result.ask.superseded, undefined, `the kept ask was cancelled: ${JSON.stringify(result.ask)}`);
    assert.equal(result.ask.permits, 1, "the kept ask got the permit a gave back");
  });

  test("a holder that says how long its calls last (callsMs) gets a lease that long plus a quarter of the TTL, answered at once or kept; one that does not, the whole TTL", async () => {
    const users = await started(startOrigin("users"));
    const fleet = await started(startFleet(config(users), { gateways: 1 }));
    const host = await fleet.mf.getWorker("budget-host");
    const result = await (await host.fetch("http://edgeshed.test/__test/lease-ttls?origin=ttls")).json();
    assert.deepEqual([result.short.permits, result.short.ttlMs], [2, 2250], JSON.stringify(result.short));
    assert.deepEqual([result.kept.permits, result.kept.ttlMs], [1, 2250], JSON.stringify(result.kept));
    assert.deepEqual([result.unsaid.permits, result.unsaid.ttlMs], [1, 5000], JSON.stringify(result.unsaid));
  });
});
