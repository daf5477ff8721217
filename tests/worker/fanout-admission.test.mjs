// Fan-out admission is all-or-nothing: no call of a request reaches its
// origin before every required call of that request is admitted, so a
// request that is refused (503/504) never costs an origin a call. Optional
// calls do not hold the others back.
import { after as afterAll, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { after, answer, gate, startOrigin } from "./support/origin.mjs";
import { idle, startWorker } from "./support/worker.mjs";

describe("fan-out: all-or-nothing admission", () => {
  let free, busy, worker;
  before(async () => {
    free = await startOrigin("free");
    busy = await startOrigin("busy");
    worker = await startWorker({
      statsPublic: true, // the test reads /__edgeshed/*
      origins: {
        free: { url: free.url },
        busy: { url: busy.url, maxInFlight: 1, maxQueue: 1, queueTimeoutMs: 100 },
        solo: { url: busy.url, maxInFlight: 1, maxQueue: 1, queueTimeoutMs: 500 },
      },
      routes: [
        { path: "/hold", fanout: [{ origin: "busy", path: "/hold" }] },
        { path: "/both", fanout: [{ origin: "free", path: "/f" }, { origin: "busy", path: "/b" }] },
        // one origin twice: the second call queues for the permit the first holds
        {
          path: "/twice",
          fanout: [
            { origin: "solo", path: "/t1", required: false },
            { origin: "solo", path: "/t2" },
          ],
        },
        {
          path: "/optional",
          fanout: [
            { origin: "free", path: "/f" },
            { origin: "busy", path: "/b", required: false },
          ],
        },
      ],
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await Promise.all([free, busy].map((o) => o?.close()));
  });

  test("a required call that waits in its queue and times out: 503, and its admitted sibling never called its origin", async () => {
    const held = gate();
    free.reset();
    busy.reset();
    free.behave(answer({ f: 1 }));
    busy.behave(after(held, answer({ held: true })));
    const holder = worker.get("/hold");
    try {
      await held.arrivals(1);
      const r = await worker.get("/both");
      assert.equal(r.status, 503, r.text);
      assert.deepEqual(r.json, { error: "overloaded", scope: "origin:busy", reason: "queue_timeout" });
      assert.equal(free.requests.length, 0, "the admitted call to free waited for busy's admission, then was dropped unsent");
    } finally {
      held.open();
    }
    assert.equal((await holder).status, 200);
    const stats = await worker.until(idle, { what: "idle" });
    assert.equal(stats.origins.free.inFlight, 0);
    assert.equal(stats.origins.free.admitted, 1, "free's permit was taken, and given back");
    assert.equal(busy.requests.length, 1, "only the holder called busy");
  });

  test("once every required call is admitted the calls fetch: 200", async () => {
    free.reset();
    busy.reset();
    free.behave(answer({ f: 2 }));
    busy.behave(answer({ b: 2 }));
    const r = await worker.get("/both");
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, { results: { free: { f: 2 }, busy: { b: 2 } }, degraded: [] });
    await worker.until(idle, { what: "idle" });
  });

  test("an optional call still waiting for its admission does not hold the required ones back", async () => {
    const held = gate();
    free.reset();
    busy.reset();
    free.behave(answer({ f: 3 }));
    busy.behave(after(held, answer({ held: true })));
    const holder = worker.get("/hold");
    try {
      await held.arrivals(1);
      const request = worker.get("/optional");
      await free.arrivals(1); // fetched while busy's call still waits in its queue
      const r = await request;
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json, { results: { free: { f: 3 } }, degraded: ["busy"] });
    } finally {
      held.open();
    }
    assert.equal((await holder).status, 200);
    await worker.until(idle, { what: "idle" });
  });

  test("a call never waits at the gate for a sibling queued on its own origin: a route calling one origin twice with limit 1 answers 200", async () => {
    busy.reset();
    busy.behave(answer({ t: 1 }));
    const r = await worker.get("/twice");
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, { results: { solo: { t: 1 } }, degraded: [] });
    assert.equal(busy.requests.length, 2, "one call after the other");
    await worker.until(idle, { what: "idle" });
  });
});
