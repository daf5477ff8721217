// limiter.onIdle(), limiter.clearQueue() and limiter.close() (docs/js.md,
// "Idle, clearing the queue, closing"): onIdle resolves at the release that
// leaves nothing in flight and nothing queued (held fetch bodies and
// abandoned work included), clearQueue refuses every waiter with
// OverloadedError reason "cleared", close refuses new calls with reason
// "closed", lets the running and the waiting ones finish, and resolves when
// the last has ended.
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import "./support/link-package.mjs";
import { deferred, isSettled, settle, startOrigin } from "./support/helpers.mjs";

const { Limiter, OverloadedError } = await import("edgeshed");
const LONG = 60_000;

describe("onIdle", () => {
  test("resolves at once on an idle limiter", async () => {
    const limiter = new Limiter({ maxInFlight: 1 });
    assert.equal(await isSettled(limiter.onIdle()), true);
  });

  test("resolves when the last running and queued call has ended, not before", async () => {
    const limiter = new Limiter({ maxInFlight: 1, maxQueue: 2, queueTimeoutMs: LONG });
    const first = deferred();
    const second = deferred();
    const running = limiter.run(() => first.promise);
    const queued = limiter.run(() => second.promise);
    const idle = limiter.onIdle();
    const idleToo = limiter.onIdle();
    first.resolve("one");
    assert.equal(await running, "one");
    // The queued call now holds the slot.
    assert.equal(await isSettled(idle), false, "resolved while a call still ran");
    assert.deepEqual([limiter.stats().inFlight, limiter.stats().queued], [1, 0]);
    second.resolve("two");
    assert.equal(await queued, "two");
    await idle;
    await idleToo;
    assert.deepEqual([limiter.stats().inFlight, limiter.stats().queued], [0, 0]);
    // And again on the next busy spell.
    const third = deferred();
    const later = limiter.run(() => third.promise);
    const idleAgain = limiter.onIdle();
    assert.equal(await isSettled(idleAgain), false);
    third.reject(new Error("boom"));
    assert.equal((await settle(later)).error.message, "boom");
    await idleAgain;
  });

  test("waits for work whose caller gave up (deadline) until the work settles", async () => {
    const limiter = new Limiter({ maxInFlight: 1 });
    const work = deferred();
    const call = limiter.run(() => work.promise, { deadlineMs: 1 });
    assert.equal((await settle(call)).error.name, "DeadlineError");
    const idle = limiter.onIdle();
    assert.equal(await isSettled(idle), false, "the abandoned work still holds its slot");
    assert.equal(limiter.stats().abandoned, 1);
    work.resolve();
    await idle;
  });

  describe("with a fetch body", () => {
    let origin;
    after(() => origin?.close());
    test("waits until the body of a fetch has been read", async () => {
      origin = await startOrigin();
      const limiter = new Limiter({ maxInFlight: 1 });
      const pending = limiter.fetch(`${origin.url}/body`);
      const { res } = await origin.next("/body");
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("part");
      const response = await pending;
      const idle = limiter.onIdle();
      assert.equal(await isSettled(idle), false, "resolved while the body held its slot");
      assert.equal(limiter.stats().heldBodies, 1);
      res.end(" and the rest");
      assert.equal(await response.text(), "part and the rest");
      await idle;
      assert.equal(limiter.stats().inFlight, 0);
    });
  });
});

describe("clearQueue", () => {
  test("refuses every waiting call with OverloadedError reason cleared; running calls go on", async () => {
    const limiter = new Limiter({ maxInFlight: 1, maxQueue: 3, queueTimeoutMs: LONG });
    const work = deferred();
    const running = limiter.run(() => work.promise);
    const signal = new AbortController().signal;
    const waiting = [
      limiter.run(() => "never"),
      limiter.run(() => "never", { deadlineMs: LONG }),
      limiter.fetch("http://127.0.0.1:1/never", { signal }),
    ].map(settle);
    assert.equal(limiter.stats().queued, 3);
    limiter.clearQueue();
    for (const { ok, error } of await Promise.all(waiting)) {
      assert.equal(ok, false);
      assert.ok(error instanceof OverloadedError, String(error));
      assert.equal(error.status, 503);
      assert.equal(error.reason, "cleared");
      assert.match(error.message, /^service overloaded: the queue was cleared \(limiter\.clearQueue\(\)\)/);
    }
    assert.equal(limiter.stats().queued, 0);
    assert.equal(await isSettled(running), false, "the running call was not touched");
    // The queue takes calls again, and they run.
    const next = limiter.run(() => "next");
    assert.equal(limiter.stats().queued, 1);
    work.resolve("done");
    assert.equal(await running, "done");
    assert.equal(await next, "next");
    await limiter.onIdle();
  });

  test("a waiter that queues after the clear keeps its place", async () => {
    const limiter = new Limiter({ maxInFlight: 1, maxQueue: 2, queueTimeoutMs: LONG });
    const work = deferred();
    const running = limiter.run(() => work.promise);
    const before = settle(limiter.run(() => "before"));
    limiter.clearQueue();
    const afterClear = limiter.run(() => "after");
    assert.equal((await before).error.reason, "cleared");
    assert.equal(await isSettled(afterClear), false);
    work.resolve();
    await running;
    assert.equal(await afterClear, "after");
  });

  test("on an empty queue does nothing, and onIdle resolves once the queue is cleared and the work done", async () => {
    const limiter = new Limiter({ maxInFlight: 1, maxQueue: 1, queueTimeoutMs: LONG });
    limiter.clearQueue();
    const work = deferred();
    const running = limiter.run(() => work.promise);
    const waiting = settle(limiter.run(() => "never"));
    const idle = limiter.onIdle();
    limiter.clearQueue();
    assert.equal((await waiting).error.reason, "cleared");
    assert.equal(await isSettled(idle), false);
    work.resolve();
    await running;
    await idle;
  });
});

describe("close", () => {
  test("refuses new calls with reason closed, lets the running and queued ones finish, resolves after the last", async () => {
    const limiter = new Limiter({ maxInFlight: 1, maxQueue: 1, queueTimeoutMs: LONG });
    const first = deferred();
    const second = deferred();
    const running = limiter.run(() => first.promise);
    const queued = limiter.run(() => second.promise);
    const closed = limiter.close();
    for (const refused of [limiter.run(() => "late"), limiter.fetch("http://127.0.0.1:1/late")]) {
      const { ok, error } = await settle(refused);
      assert.equal(ok, false);
      assert.ok(error instanceof OverloadedError, String(error));
      assert.equal(error.status, 503);
      assert.equal(error.reason, "closed");
      assert.equal(error.message, "service overloaded: the limiter is closed (limiter.close()): it starts no new call");
    }
    assert.equal(await isSettled(closed), false);
    first.resolve(1);
    assert.equal(await running, 1);
    assert.equal(await isSettled(closed), false, "resolved while the queued call ran");
    second.resolve(2);
    assert.equal(await queued, 2, "a call waiting at close() still runs");
    await closed;
    assert.deepEqual([limiter.stats().inFlight, limiter.stats().queued], [0, 0]);
    // Closed for good; a second close() resolves at once.
    assert.equal((await settle(limiter.run(() => 0))).error.reason, "closed");
    assert.equal(await isSettled(limiter.close()), true);
  });

  test("clearQueue() then close(): a drain that refuses the waiting calls too", async () => {
    const limiter = new Limiter({ maxInFlight: 1, maxQueue: 1, queueTimeoutMs: LONG });
    const work = deferred();
    const running = limiter.run(() => work.promise);
    const waiting = settle(limiter.run(() => "never"));
    limiter.clearQueue();
    const closed = limiter.close();
    assert.equal((await waiting).error.reason, "cleared");
    assert.equal(await isSettled(closed), false);
    work.resolve();
    await running;
    await closed;
  });

  test("a call refused by a closed limiter has the caller's stack", async () => {
    const limiter = new Limiter({ maxInFlight: 1 });
    await limiter.close();
    // Stacks are budgeted to one per millisecond (glue.js): start a fresh one.
    const start = performance.now();
    while (performance.now() - start < 2) await new Promise((resolve) => setTimeout(resolve, 1));
    const error = await (function callsAfterClose() {
      return limiter.run(() => 0);
    })().catch((e) => e);
    assert.equal(error.reason, "closed");
    assert.match(error.stack.split("\n")[1], /^\s+at callsAfterClose \(/, error.stack);
  });
});
