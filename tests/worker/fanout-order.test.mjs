// Fan-out admission takes every permit in one order of origins (issue #29,
// finding 1): two fan-outs {a, b} whose queues reorder them can no longer
// hold each other's permits until a queue timeout. Each scenario: X holds
// b; R1 takes a and queues for b; R2 arrives and is ranked ahead of R1 on
// b (criticality, codel's newest first, a fair-share pick; and the first
// again with both origins under a fleet budget). When X ends, both must
// answer 200 soon after; before the order, R2 took b and waited for a while
// R1 held a and waited for b, until a queue timeout refused one of them.
import { after as afterAll, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { answer, gate, startOrigin } from "./support/origin.mjs";
import { eventually, startFleet } from "./support/fleet.mjs";
import { startWorker } from "./support/worker.mjs";

// The queue timeouts are seconds; "soon" is well under them.
const SOON_MS = 1000;
const SHEDDABLE = { headers: { "edgeshed-criticality": "sheddable" } };
const tenant = (name) => ({ headers: { "x-tenant": name } });

/** Origin b: `/hold*` calls wait for their gate; anything else answers at once. */
function holdingOrigin(origin, gates) {
  origin.behave(async (req, res, seen) => {
    const held = gates[new URL(req.url, "http://b").pathname];
    if (held) await Promise.race([held.wait(), seen.closed]);
    if (res.destroyed) return;
    return answer({ b: req.url })(req, res, seen);
  });
}

/** Resolves to the answer and how long after `opened()` it came. */
function timed(promise, opened) {
  return promise.then((r) => ({ ...r, after: Date.now() - opened() }));
}

function assertSoon(answers, what) {
  for (const [name, r] of Object.entries(answers)) {
    assert.equal(r.status, 200, `${what}: ${name} answered ${r.status} ${r.text} ${r.after} ms after X ended`);
    assert.ok(r.after < SOON_MS, `${what}: ${name} answered ${r.after} ms after X ended (limit ${SOON_MS} ms)`);
  }
}

describe("fan-out admission order: two fan-outs reordered on b never wait for each other", () => {
  let a, b;
  const workers = [];
  before(async () => {
    a = await startOrigin("a");
    b = await startOrigin("b");
    a.behave(answer({ a: 1 }));
  });
  afterAll(async () => {
    for (const w of workers) await w.dispose();
    await Promise.all([a, b].map((o) => o?.close()));
  });
  const start = async (origins, routes) => {
    const worker = await startWorker({
      statsPublic: true,
      origins: { a: { url: a.url, ...origins.a }, b: { url: b.url, ...origins.b } },
      routes: [
        { path: "/hold", fanout: [{ origin: "b", path: "/hold" }] },
        { path: "/ab", fanout: [{ origin: "a", path: "/a" }, { origin: "b", path: "/b" }] },
        ...routes,
      ],
    });
    workers.push(worker);
    return worker;
  };
  const limit1 = { maxInFlight: 1, maxQueue: 4, queueTimeoutMs: 3000 };

  test("criticality: R1 lowered to sheddable by the header, R2 default", async () => {
    const x = gate();
    holdingOrigin(b, { "/hold": x });
    const worker = await start({ a: limit1, b: limit1 }, []);
    let openedAt;
    const opened = () => openedAt;
    const holder = worker.get("/hold");
    await x.arrivals(1);
    const r1 = timed(worker.get("/ab", SHEDDABLE), opened);
    await worker.until((s) => s.origins.a.inFlight === 1 && s.origins.b.queued === 1, { what: "R1 holds a, queued for b" });
    const r2 = timed(worker.get("/ab"), opened);
    await worker.until((s) => s.origins.a.queued === 1, { what: "R2 queued for a" });
    openedAt = Date.now();
    x.open();
    assertSoon({ R1: await r1, R2: await r2 }, "criticality");
    assert.equal((await holder).status, 200);
  });

  test("codel: b's standing queue is served newest first (both requests default)", async () => {
    const x = gate();
    holdingOrigin(b, { "/hold": x });
    const codel = (queueTimeoutMs, codelTargetMs) => ({ maxInFlight: 1, maxQueue: 4, queueTimeoutMs, queueDiscipline: "codel", codelTargetMs });
    const worker = await start({ a: codel(3000, 2500), b: codel(1500, 1000) }, [
      { path: "/b", fanout: [{ origin: "b", path: "/f" }] },
    ]);
    let openedAt;
    const opened = () => openedAt;
    const holder = worker.get("/hold");
    await x.arrivals(1);
    // Two fillers keep b's queue standing past its interval (1.5 s): the
    // first times out, the second still waits, so b now serves newest first.
    const fillers = [worker.get("/b")];
    await worker.until((s) => s.origins.b.queued === 1, { what: "the first filler queued" });
    fillers.push(worker.get("/b"));
    await worker.until((s) => s.origins.b.queued === 2, { what: "the second filler queued" });
    await worker.until((s) => s.origins.b.queueTimeouts >= 1, { what: "the first filler timed out" });
    const r1 = timed(worker.get("/ab"), opened);
    await worker.until((s) => s.origins.a.inFlight === 1, { what: "R1 holds a (and queued for b)" });
    const r2 = timed(worker.get("/ab"), opened);
    await worker.until((s) => s.origins.a.queued === 1, { what: "R2 queued for a" });
    openedAt = Date.now();
    x.open();
    assertSoon({ R1: await r1, R2: await r2 }, "codel");
    assert.equal((await holder).status, 200);
    // (the second filler may be served once R1 is done, or time out)
    for (const filler of await Promise.all(fillers)) assert.ok([200, 503].includes(filler.status), filler.text);
  });

  test("fair share: b (limit 2) picks R2's key, which holds less of it than R1's", async () => {
    const [x1, x2] = [gate(), gate()];
    holdingOrigin(b, { "/hold1": x1, "/hold2": x2 });
    const fair = { fairness: { key: "header:x-tenant" } };
    const worker = await start({ a: limit1, b: { ...limit1, maxInFlight: 2 } }, [
      { path: "/hold1", fanout: [{ origin: "b", path: "/hold1" }], ...fair },
      { path: "/hold2", fanout: [{ origin: "b", path: "/hold2" }], ...fair },
      { path: "/fair-ab", fanout: [{ origin: "a", path: "/a" }, { origin: "b", path: "/b" }], ...fair },
    ]);
    let openedAt;
    const opened = () => openedAt;
    // X1 (tenant k1) and X2 (tenant k3) hold both slots of b.
    const holders = [worker.get("/hold1", tenant("k1")), worker.get("/hold2", tenant("k3"))];
    await Promise.all([x1.arrivals(1), x2.arrivals(1)]);
    const r1 = timed(worker.get("/fair-ab", tenant("k1")), opened);
    await worker.until((s) => s.origins.a.inFlight === 1 && s.origins.b.queued === 1, { what: "R1 (k1) holds a, queued for b" });
    const r2 = timed(worker.get("/fair-ab", tenant("k2")), opened);
    await worker.until((s) => s.origins.a.queued === 1, { what: "R2 (k2) queued for a" });
    openedAt = Date.now();
    x2.open(); // a slot of b frees up while k1 still holds the other
    assertSoon({ R1: await r1, R2: await r2 }, "fair share");
    x1.open();
    for (const h of await Promise.all(holders)) assert.equal(h.status, 200, h.text);
  });
});

describe("fan-out admission order: budgeted origins (a real EdgeshedBudget object)", () => {
  let a, b, fleet;
  const x = gate();
  before(async () => {
    a = await startOrigin("a");
    b = await startOrigin("b");
    a.behave(answer({ a: 1 }));
    holdingOrigin(b, { "/hold": x });
    // Each call takes its local permit, then its fleet permit (asking the
    // object for a lease is part of its admission), in the order a, b.
    const budgeted = { maxInFlight: 1, maxQueue: 4, queueTimeoutMs: 3000, budget: { maxInFlight: 4 } };
    fleet = await startFleet(
      {
        statsPublic: true,
        origins: { a: { url: a.url, ...budgeted }, b: { url: b.url, ...budgeted } },
        routes: [
          { path: "/hold", fanout: [{ origin: "b", path: "/hold" }] },
          { path: "/ab", fanout: [{ origin: "a", path: "/a" }, { origin: "b", path: "/b" }] },
        ],
      },
      { gateways: 1 },
    );
  });
  afterAll(async () => {
    await fleet?.dispose();
    await Promise.all([a, b].map((o) => o?.close()));
  });

  test("criticality over budgeted origins: R1 (sheddable) holds a, R2 (default) ranked ahead of it on b", async () => {
    const stats = () => fleet.stats(0);
    let openedAt;
    const opened = () => openedAt;
    const holder = fleet.get(0, "/hold");
    await x.arrivals(1);
    const r1 = timed(fleet.get(0, "/ab", SHEDDABLE), opened);
    await eventually(stats, (s) => s.origins.a.inFlight === 1 && s.origins.b.queued === 1, {
      what: "R1 holds a (local and fleet permits), queued for b",
    });
    const r2 = timed(fleet.get(0, "/ab"), opened);
    await eventually(stats, (s) => s.origins.a.queued === 1, { what: "R2 queued for a" });
    openedAt = Date.now();
    x.open();
    assertSoon({ R1: await r1, R2: await r2 }, "budget");
    assert.equal((await holder).status, 200);
    const after = await stats();
    assert.deepEqual([after.origins.a.budgetShed, after.origins.b.budgetShed], [0, 0], "no budget refusal");
  });
});
