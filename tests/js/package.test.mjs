// The npm package in Node.js, imported exactly as a user imports it: through
// node_modules/edgeshed -> pkg/ and pkg/package.json's `exports` ("node").
// Run after ./scripts/build-pkg.sh:  node --test tests/js/
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { ROOT, PKG } from "./support/link-package.mjs";
import { closed, deferred, isSettled, readmeSnippet, settle, startOrigin } from "./support/helpers.mjs";

// Dynamic, so that the link above exists before "edgeshed" is resolved.
const { Limiter, OverloadedError, DeadlineError } = await import("edgeshed");
const run = promisify(execFile);

const STATS_KEYS = [
  "inFlight", "queued", "admitted", "shed", "queueTimeouts",
  "expired", "abandoned", "heldBodies", "bodyTimeouts", "limit", "reserve", "ceilings",
  "byCriticality", "fairShareRefused", "rateLimited", "rateOverflow", "topRefusedKeys",
];
// The counters most tests never move: `expect(...)` fills them in.
const QUIET = { expired: 0, abandoned: 0, heldBodies: 0, bodyTimeouts: 0 };
const expect = (fields) => ({ ...QUIET, ...fields });
const LONG = 60_000; // a queue timeout no test waits for (admission clears its timer)

/** `limiter.stats()` without the criticality fields and counters (criticality.test.mjs checks those). */
function stats(limiter) {
  const { reserve, ceilings, byCriticality, fairShareRefused, rateLimited, rateOverflow, topRefusedKeys, ...s } = limiter.stats();
  const keys = Object.keys({ ...s, reserve, ceilings, byCriticality, fairShareRefused, rateLimited, rateOverflow, topRefusedKeys });
  assert.deepEqual(keys, STATS_KEYS);
  return s;
}

function assertOverloaded(error, message = /overloaded/) {
  assert.ok(error instanceof OverloadedError, `expected an OverloadedError, got ${error}`);
  assert.ok(error instanceof Error);
  assert.equal(error.name, "OverloadedError");
  assert.equal(error.status, 503);
  assert.match(error.message, message);
}

function assertDeadline(error) {
  assert.ok(error instanceof DeadlineError, `expected a DeadlineError, got ${error}`);
  assert.ok(error instanceof Error);
  assert.equal(error.name, "DeadlineError");
  assert.equal(error.status, 504);
}

/** A task that records its start and then waits for `gate`. */
function gatedTask(log, name, gate) {
  return (signal) => {
    log.push(name);
    gate.signal = signal;
    return gate.promise;
  };
}

test("the package resolves through pkg/package.json to the node entry", async () => {
  const manifest = JSON.parse(readFileSync(join(PKG, "package.json"), "utf8"));
  assert.equal(manifest.name, "edgeshed");
  assert.equal(manifest.exports["."].node, "./node.js");
  assert.match(import.meta.resolve("edgeshed"), /\/(pkg|node_modules\/edgeshed)\/node\.js$/);
  assert.equal(typeof Limiter, "function");
  assert.deepEqual(stats(new Limiter({ maxInFlight: 3 })), expect({
    inFlight: 0, queued: 0, admitted: 0, shed: 0, queueTimeouts: 0, limit: 3,
  }));
});

describe("admission", () => {
  test("admits up to maxInFlight and sheds the rest at once with maxQueue 0", async () => {
    const limiter = new Limiter({ maxInFlight: 2, maxQueue: 0 });
    const log = [];
    const gates = [deferred(), deferred()];
    const running = gates.map((gate, i) => limiter.run(gatedTask(log, `t${i}`, gate)));
    assert.deepEqual(stats(limiter), expect({ inFlight: 2, queued: 0, admitted: 2, shed: 0, queueTimeouts: 0, limit: 2 }));

    const third = await settle(limiter.run(() => log.push("t2")));
    assert.equal(third.ok, false);
    assertOverloaded(third.error);
    assert.equal(third.error.message, "service overloaded: limit 2 reached, maxQueue 0: shed at once");
    assert.deepEqual(stats(limiter), expect({ inFlight: 2, queued: 0, admitted: 2, shed: 1, queueTimeouts: 0, limit: 2 }));

    gates[0].resolve("a");
    gates[1].resolve("b");
    assert.deepEqual(await Promise.all(running), ["a", "b"]);
    assert.deepEqual(log, ["t0", "t1"], "the shed task never ran");
    assert.equal(stats(limiter).inFlight, 0);
    assert.equal(await limiter.run(() => "free again"), "free again");
  });

  test("queued calls run in FIFO order; a full queue sheds", async () => {
    const limiter = new Limiter({ maxInFlight: 1, maxQueue: 3, queueTimeoutMs: LONG });
    const log = [];
    const gates = Array.from({ length: 4 }, () => deferred());
    const calls = gates.map((gate, i) => limiter.run(gatedTask(log, i, gate)));
    assert.deepEqual(stats(limiter), expect({ inFlight: 1, queued: 3, admitted: 1, shed: 0, queueTimeouts: 0, limit: 1 }));

    const overflow = await settle(limiter.run(() => "never"));
    assertOverloaded(overflow.error);
    assert.equal(stats(limiter).shed, 1);

    for (let i = 0; i < gates.length; i++) {
      assert.equal(await isSettled(calls[i]), false);
      assert.deepEqual(log, Array.from({ length: i + 1 }, (_, k) => k), `call ${i} started, later ones wait`);
      gates[i].resolve(i * 10);
      assert.equal(await calls[i], i * 10);
    }
    assert.deepEqual(stats(limiter), expect({ inFlight: 0, queued: 0, admitted: 4, shed: 1, queueTimeouts: 0, limit: 1 }));
  });

  test("a queue timeout rejects with OverloadedError and leaves no waiter behind", async () => {
    const limiter = new Limiter({ maxInFlight: 1, maxQueue: 1, queueTimeoutMs: 20 });
    const gate = deferred();
    const holder = limiter.run(() => gate.promise);
    let ran = false;
    const started = performance.now();
    const waiter = settle(limiter.run(() => (ran = true)));
    assert.equal(stats(limiter).queued, 1);

    const outcome = await waiter;
    assert.ok(performance.now() - started >= 15, "it waited for the queue timeout");
    assertOverloaded(outcome.error, /queue timeout/);
    assert.equal(ran, false);
    assert.deepEqual(stats(limiter), expect({ inFlight: 1, queued: 0, admitted: 1, shed: 0, queueTimeouts: 1, limit: 1 }));

    gate.resolve("done");
    assert.equal(await holder, "done");
    // The timed-out waiter did not take the released permit: the next call is admitted at once.
    const next = limiter.run(async () => "next");
    assert.equal(stats(limiter).inFlight, 1);
    assert.equal(await next, "next");
    assert.deepEqual(stats(limiter), expect({ inFlight: 0, queued: 0, admitted: 2, shed: 0, queueTimeouts: 1, limit: 1 }));
  });
});

describe("queue timeouts share one host timer", () => {
  const hostTimers = () => process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;

  test("a later call with an earlier deadline times out first (the shared timer re-arms earlier)", async () => {
    const slow = new Limiter({ maxInFlight: 1, maxQueue: 1, queueTimeoutMs: 300 });
    const fast = new Limiter({ maxInFlight: 1, maxQueue: 1, queueTimeoutMs: 10 });
    const gates = [deferred(), deferred()];
    const holders = [slow.run(() => gates[0].promise), fast.run(() => gates[1].promise)];
    const order = [];
    const slowWaiter = settle(slow.run(() => "slow ran")).then((o) => (order.push("slow"), o));
    const fastWaiter = settle(fast.run(() => "fast ran")).then((o) => (order.push("fast"), o));
    assertOverloaded((await fastWaiter).error, /queue timeout/);
    assert.deepEqual(order, ["fast"], "the 10 ms waiter did not wait for the 300 ms one");
    assert.equal(stats(slow).queued, 1);
    assertOverloaded((await slowWaiter).error, /queue timeout/);
    assert.deepEqual(order, ["fast", "slow"]);
    gates.forEach((g) => g.resolve());
    await Promise.all(holders);
  });

  test("many waiters cost one host timer, and none is left once they are admitted", async () => {
    const before = hostTimers();
    const limiter = new Limiter({ maxInFlight: 1, maxQueue: 1000, queueTimeoutMs: LONG });
    const gate = deferred();
    const holder = limiter.run(() => gate.promise);
    const waiters = Array.from({ length: 1000 }, (_, i) => limiter.run(() => i));
    assert.equal(stats(limiter).queued, 1000);
    assert.equal(hostTimers(), before + 1, "one setTimeout for 1,000 queued calls");
    gate.resolve();
    await holder;
    const results = await Promise.all(waiters);
    assert.deepEqual(results, Array.from({ length: 1000 }, (_, i) => i));
    assert.equal(hostTimers(), before, "the shared timer is cleared with the last waiter (Node can exit)");
    assert.deepEqual(stats(limiter), expect({ inFlight: 0, queued: 0, admitted: 1001, shed: 0, queueTimeouts: 0, limit: 1 }));
  });
});

describe("deadlines", () => {
  test("deadlineMs expires while queued: DeadlineError 504, the task never runs", async () => {
    const limiter = new Limiter({ maxInFlight: 1, maxQueue: 1, queueTimeoutMs: LONG });
    const gate = deferred();
    const holder = limiter.run(() => gate.promise);
    let ran = false;
    const outcome = await settle(limiter.run(() => (ran = true), { deadlineMs: 20 }));
    assertDeadline(outcome.error);
    assert.equal(ran, false);
    assert.deepEqual(stats(limiter), expect({ inFlight: 1, queued: 0, admitted: 1, shed: 0, queueTimeouts: 0, expired: 1, limit: 1 }));
    gate.resolve(1);
    await holder;
    assert.equal(stats(limiter).inFlight, 0);
  });

  test("deadlineMs expires while running: DeadlineError 504 at once, the task's signal aborts, the slot is freed when the task settles", async () => {
    const limiter = new Limiter({ maxInFlight: 1, maxQueue: 1, queueTimeoutMs: LONG });
    const gate = deferred();
    const outcome = await settle(limiter.run(gatedTask([], "slow", gate), { deadlineMs: 20 }));
    assertDeadline(outcome.error);
    assert.ok(gate.signal instanceof AbortSignal, "the task received a signal");
    assert.equal(gate.signal.aborted, true);
    assert.equal(gate.signal.reason, outcome.error);
    // The task ignores its signal and still runs: it keeps its slot.
    assert.equal(stats(limiter).inFlight, 1, "held until the task settles");
    assert.equal(stats(limiter).abandoned, 1);
    assert.equal(stats(limiter).expired, 1);
    const next = limiter.run(() => "next");
    assert.equal(stats(limiter).queued, 1, "the next call waits for the slot");
    gate.resolve("too late");
    assert.equal(await next, "next");
    assert.equal(stats(limiter).inFlight, 0);
  });

  test("a call that finishes within its deadline resolves normally", async () => {
    const limiter = new Limiter({ maxInFlight: 1 });
    assert.equal(await limiter.run(async (signal) => signal.aborted, { deadlineMs: LONG }), false);
    assert.equal(stats(limiter).inFlight, 0);
  });
});

describe("abort signals", () => {
  test("aborting a queued call rejects with signal.reason and removes the waiter", async () => {
    const limiter = new Limiter({ maxInFlight: 1, maxQueue: 2, queueTimeoutMs: LONG });
    const gate = deferred();
    const holder = limiter.run(() => gate.promise);
    const controller = new AbortController();
    let ran = false;
    const queued = settle(limiter.run(() => (ran = true), { signal: controller.signal }));
    const log = [];
    const after = limiter.run(() => log.push("after"));
    assert.equal(stats(limiter).queued, 2);

    const reason = new Error("caller gave up");
    controller.abort(reason);
    const outcome = await queued;
    assert.equal(outcome.error, reason, "rejects with the very reason object");
    assert.equal(stats(limiter).queued, 1);
    gate.resolve();
    await holder;
    await after;
    assert.equal(ran, false);
    assert.deepEqual(log, ["after"], "the next waiter got the permit");
    assert.deepEqual(stats(limiter), expect({ inFlight: 0, queued: 0, admitted: 2, shed: 0, queueTimeouts: 0, limit: 1 }));
  });

  test("aborting a running call rejects with signal.reason at once; the slot is freed when the task settles", async () => {
    const limiter = new Limiter({ maxInFlight: 1 });
    const gate = deferred();
    const controller = new AbortController();
    const running = settle(limiter.run(gatedTask([], "t", gate), { signal: controller.signal }));
    assert.equal(await isSettled(running), false);
    assert.equal(stats(limiter).inFlight, 1);
    controller.abort(); // default reason: a DOMException named AbortError
    const outcome = await running;
    assert.equal(outcome.error, controller.signal.reason);
    assert.equal(outcome.error.name, "AbortError");
    assert.equal(gate.signal.aborted, true, "the task's own signal aborted too");
    assert.equal(gate.signal.reason, controller.signal.reason);
    assert.equal(stats(limiter).inFlight, 1, "the task still runs: its slot is held");
    assert.equal(stats(limiter).abandoned, 1);
    await assert.rejects(limiter.run(() => 7), { name: "OverloadedError" }, "no second call meanwhile");
    gate.resolve("ignored");
    // The release reacts to the task's promise before this later reaction.
    await settle(gate.promise);
    assert.equal(stats(limiter).inFlight, 0);
    assert.equal(await limiter.run(() => 7), 7);
  });

  test("an already aborted signal rejects at once without admitting", async () => {
    const limiter = new Limiter({ maxInFlight: 1 });
    const reason = { why: "not an Error" };
    let ran = false;
    const outcome = await settle(limiter.run(() => (ran = true), { signal: AbortSignal.abort(reason) }));
    assert.equal(outcome.error, reason);
    assert.equal(ran, false);
    assert.deepEqual(stats(limiter), expect({ inFlight: 0, queued: 0, admitted: 0, shed: 0, queueTimeouts: 0, limit: 1 }));
  });
});

describe("task outcomes", () => {
  test("a throwing or rejecting fn rejects run with the same value and frees the permit", async () => {
    const limiter = new Limiter({ maxInFlight: 1 });
    const thrown = new TypeError("sync throw");
    assert.equal((await settle(limiter.run(() => { throw thrown; }))).error, thrown);
    assert.equal(stats(limiter).inFlight, 0);

    const rejected = new Error("async reject");
    assert.equal((await settle(limiter.run(async () => { throw rejected; }))).error, rejected);
    assert.equal(stats(limiter).inFlight, 0);

    const weird = { code: 42 };
    assert.equal((await settle(limiter.run(() => Promise.reject(weird)))).error, weird);
    assert.equal((await settle(limiter.run(() => { throw "a string"; }))).error, "a string");
    assert.deepEqual(stats(limiter), expect({ inFlight: 0, queued: 0, admitted: 4, shed: 0, queueTimeouts: 0, limit: 1 }));
  });

  test("after waiting in the queue too: the call settles with fn's outcome and frees the permit", async () => {
    const limiter = new Limiter({ maxInFlight: 1, maxQueue: 4, queueTimeoutMs: LONG });
    const gate = deferred();
    const holder = limiter.run(() => gate.promise);
    const thrown = new TypeError("sync throw");
    const rejected = new Error("async reject");
    const calls = [
      settle(limiter.run(() => { throw thrown; })),
      settle(limiter.run(async () => { throw rejected; })),
      settle(limiter.run(() => ({ then: (resolve) => resolve("thenable") }))),
      settle(limiter.run(async () => "value")),
    ];
    assert.equal(stats(limiter).queued, 4);
    gate.resolve("held");
    assert.equal(await holder, "held");
    const [a, b, c, d] = await Promise.all(calls);
    assert.equal(a.error, thrown);
    assert.equal(b.error, rejected);
    assert.equal(c.value, "thenable");
    assert.equal(d.value, "value");
    assert.deepEqual(stats(limiter), expect({ inFlight: 0, queued: 0, admitted: 5, shed: 0, queueTimeouts: 0, limit: 1 }));
  });

  test("fn's return value (plain or thenable) is run's value; fn gets no signal without options", async () => {
    const limiter = new Limiter({ maxInFlight: 1 });
    const object = { a: 1 };
    assert.equal(await limiter.run(() => object), object);
    assert.equal(await limiter.run(() => undefined), undefined);
    assert.equal(await limiter.run(() => ({ then: (resolve) => resolve("thenable") })), "thenable");
    assert.deepEqual(await limiter.run((...args) => args), [], "no signal argument");
  });
});

describe("fetch against a real HTTP server", () => {
  let origin;
  before(async () => {
    origin = await startOrigin();
  });
  after(() => origin.close());

  /** Reads one chunk from `reader` as text. */
  async function readChunk(reader) {
    const { value, done } = await reader.read();
    return done ? null : new TextDecoder().decode(value);
  }

  test("holds the permit from the request until the body is read to the end", async () => {
    const limiter = new Limiter({ maxInFlight: 1 });
    const pending = limiter.fetch(`${origin.url}/drip`);
    assert.equal(stats(limiter).inFlight, 1, "admitted before headers");
    const { res } = await origin.next("/drip");
    assert.equal(await isSettled(pending), false);
    res.writeHead(200, { "content-type": "text/plain" });
    res.write("one,");
    const response = await pending;
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "text/plain");
    const reader = response.body.getReader();
    assert.equal(await readChunk(reader), "one,");
    assert.equal(stats(limiter).inFlight, 1, "held while the body is unread");
    assert.equal(stats(limiter).heldBodies, 1, "counted as a held body");
    assertOverloaded((await settle(limiter.fetch(`${origin.url}/other`))).error);

    res.write("two,");
    assert.equal(await readChunk(reader), "two,");
    assert.equal(stats(limiter).inFlight, 1);
    res.end("three");
    assert.equal(await readChunk(reader), "three");
    assert.equal(await readChunk(reader), null);
    assert.deepEqual(stats(limiter), expect({ inFlight: 0, queued: 0, admitted: 1, shed: 1, queueTimeouts: 0, limit: 1 }));
    assert.deepEqual(origin.pending(), [], "the shed fetch never reached the server");
  });

  test("response.text() consumes the body and frees the permit; a queued fetch then proceeds", async () => {
    const limiter = new Limiter({ maxInFlight: 1, maxQueue: 1, queueTimeoutMs: LONG });
    const first = limiter.fetch(`${origin.url}/first`, { headers: { "x-test": "yes" } });
    const second = limiter.fetch(`${origin.url}/second`);
    assert.equal(stats(limiter).queued, 1);
    const a = await origin.next("/first");
    assert.equal(a.req.headers["x-test"], "yes", "init is passed on to fetch");
    a.res.writeHead(200);
    a.res.write("partial ");
    const firstResponse = await first;
    assert.equal(stats(limiter).queued, 1, "still queued: the first body is not done");
    assert.deepEqual(origin.pending(), []);
    const text = firstResponse.text();
    a.res.end("body");
    assert.equal(await text, "partial body");
    const b = await origin.next("/second");
    assert.deepEqual(stats(limiter), expect({ inFlight: 1, queued: 0, admitted: 2, shed: 0, queueTimeouts: 0, limit: 1 }));
    b.res.end("second");
    assert.equal(await (await second).text(), "second");
    assert.equal(stats(limiter).inFlight, 0);
  });

  test("cancelling the body frees the permit and closes the connection to the server", async () => {
    const limiter = new Limiter({ maxInFlight: 1 });
    const pending = limiter.fetch(`${origin.url}/cancel`);
    const { res } = await origin.next("/cancel");
    res.writeHead(200);
    res.write("first chunk");
    const response = await pending;
    assert.equal(stats(limiter).inFlight, 1);
    await response.body.cancel(new Error("not interested"));
    assert.equal(stats(limiter).inFlight, 0);
    await closed(res);
    assert.equal(res.writableEnded, false, "the server never finished: the client went away");
  });

  test("a 204 response (no body) frees the permit at once", async () => {
    const limiter = new Limiter({ maxInFlight: 1 });
    const pending = limiter.fetch(`${origin.url}/empty`, { method: "DELETE" });
    const { req, res } = await origin.next("/empty");
    assert.equal(req.method, "DELETE");
    assert.equal(stats(limiter).inFlight, 1);
    res.writeHead(204);
    res.end();
    const response = await pending;
    assert.equal(response.status, 204);
    assert.equal(response.body, null);
    assert.equal(stats(limiter).inFlight, 0);
  });

  test("a failed fetch rejects with fetch's error and frees the permit", async () => {
    const limiter = new Limiter({ maxInFlight: 1 });
    const pending = settle(limiter.fetch(`${origin.url}/reset`));
    const { req } = await origin.next("/reset");
    req.socket.destroy();
    const outcome = await pending;
    assert.ok(outcome.error instanceof TypeError, `fetch failed with ${outcome.error}`);
    assert.equal(stats(limiter).inFlight, 0);
  });

  test("deadlineMs covers the wait for headers: DeadlineError, request aborted, permit freed", async () => {
    const limiter = new Limiter({ maxInFlight: 1 });
    const pending = settle(limiter.fetch(`${origin.url}/silent`, { deadlineMs: 30 }));
    const { res } = await origin.next("/silent");
    const outcome = await pending;
    assertDeadline(outcome.error);
    assert.equal(stats(limiter).inFlight, 0);
    await closed(res); // the aborted request closed its connection
    assert.equal(res.headersSent, false);
  });

  test("init.signal aborts the request and frees the permit", async () => {
    const limiter = new Limiter({ maxInFlight: 1 });
    const controller = new AbortController();
    const pending = settle(limiter.fetch(`${origin.url}/abort`, { signal: controller.signal }));
    const { res } = await origin.next("/abort");
    const reason = new Error("user navigated away");
    controller.abort(reason);
    assert.equal((await pending).error, reason);
    assert.equal(stats(limiter).inFlight, 0);
    await closed(res);
  });
});

describe("option validation", () => {
  const N = "maxInFlight";
  const Q = "maxQueue";
  const T = "queueTimeoutMs";
  // [label, options, error class, option the message must name]
  const constructorCases = [
    ["no options", undefined, TypeError, "options"],
    ["null options", null, TypeError, "options"],
    ["number options", 5, TypeError, "options"],
    ["string options", "maxInFlight=1", TypeError, "options"],
    ["function options", () => ({ maxInFlight: 1 }), TypeError, "options"],
    ["missing maxInFlight", {}, TypeError, N],
    ["maxInFlight undefined", { maxInFlight: undefined }, TypeError, N],
    ["typo maxInflight", { maxInflight: 4 }, TypeError, "maxInflight"],
    ["unknown key next to a good one", { maxInFlight: 4, maxqueue: 1 }, TypeError, "maxqueue"],
    ...[
      ["string", "4", TypeError],
      ["null", null, TypeError],
      ["boolean", true, TypeError],
      ["bigint", 4n, TypeError],
      ["object", { value: 4 }, TypeError],
      ["array", [4], TypeError],
      ["NaN", NaN, RangeError],
      ["Infinity", Infinity, RangeError],
      ["-Infinity", -Infinity, RangeError],
      ["negative", -1, RangeError],
      ["zero", 0, RangeError],
      ["fractional", 1.5, RangeError],
      ["huge", 1_000_001, RangeError],
      ["2^53", 2 ** 53, RangeError],
      ["-0.5", -0.5, RangeError],
    ].map(([what, value, type]) => [`maxInFlight ${what}`, { maxInFlight: value }, type, N]),
    ...[
      ["string", "1", TypeError],
      ["null", null, TypeError],
      ["NaN", NaN, RangeError],
      ["Infinity", Infinity, RangeError],
      ["-Infinity", -Infinity, RangeError],
      ["negative", -1, RangeError],
      ["fractional", 0.5, RangeError],
      ["huge", 1e12, RangeError],
    ].map(([what, value, type]) => [`maxQueue ${what}`, { maxInFlight: 1, maxQueue: value, queueTimeoutMs: 10 }, type, Q]),
    ["maxQueue > 0 without queueTimeoutMs", { maxInFlight: 1, maxQueue: 2 }, TypeError, T],
    ["maxQueue > 0 with queueTimeoutMs 0", { maxInFlight: 1, maxQueue: 2, queueTimeoutMs: 0 }, RangeError, T],
    // A timeout without a queue would never apply (as codelTargetMs without codel).
    ["queueTimeoutMs without maxQueue", { maxInFlight: 1, queueTimeoutMs: 50 }, TypeError, T],
    ["queueTimeoutMs with maxQueue 0", { maxInFlight: 1, maxQueue: 0, queueTimeoutMs: 50 }, TypeError, T],
    ["queueTimeoutMs with maxQueue undefined", { maxInFlight: 1, maxQueue: undefined, queueTimeoutMs: 50 }, TypeError, T],
    ["queueTimeoutMs 0 with maxQueue 0", { maxInFlight: 1, maxQueue: 0, queueTimeoutMs: 0 }, RangeError, T],
    ...[
      ["string", "20", TypeError],
      ["null", null, TypeError],
      ["NaN", NaN, RangeError],
      ["Infinity", Infinity, RangeError],
      ["-Infinity", -Infinity, RangeError],
      ["negative", -20, RangeError],
      ["fractional", 20.5, RangeError],
      ["beyond setTimeout's range", 2 ** 31, RangeError],
    ].map(([what, value, type]) => [`queueTimeoutMs ${what}`, { maxInFlight: 1, maxQueue: 1, queueTimeoutMs: value }, type, T]),
    ...[
      ["string", "1000", TypeError],
      ["null", null, TypeError],
      ["NaN", NaN, RangeError],
      ["Infinity", Infinity, RangeError],
      ["zero", 0, RangeError],
      ["negative", -1, RangeError],
      ["fractional", 10.5, RangeError],
      ["beyond setTimeout's range", 2 ** 31, RangeError],
    ].map(([what, value, type]) => [`bodyTimeoutMs ${what}`, { maxInFlight: 1, bodyTimeoutMs: value }, type, "bodyTimeoutMs"]),
    ["typo bodyTimeoutMS", { maxInFlight: 1, bodyTimeoutMS: 10 }, TypeError, "bodyTimeoutMS"],
    [
      "a throwing getter",
      { get maxInFlight() { throw new Error("boom"); } },
      TypeError,
      N,
    ],
  ];

  // [label, fn, options, error class, name in the message]
  const task = () => "ok";
  const runCases = [
    ["fn missing", undefined, undefined, TypeError, "fn"],
    ["fn null", null, undefined, TypeError, "fn"],
    ["fn a string", "() => 1", undefined, TypeError, "fn"],
    ["fn an object", { call() {} }, undefined, TypeError, "fn"],
    ["fn a promise", Promise.resolve(1), undefined, TypeError, "fn"],
    ["options a number", task, 250, TypeError, "options"],
    ["options a string", task, "deadlineMs=5", TypeError, "options"],
    ["options a function", task, () => {}, TypeError, "options"],
    ["typo deadlineMS", task, { deadlineMS: 5 }, TypeError, "deadlineMS"],
    ["unknown key timeout", task, { timeout: 5 }, TypeError, "timeout"],
    ["signal a plain object", task, { signal: { aborted: false } }, TypeError, "signal"],
    ["signal an AbortController", task, { signal: new AbortController() }, TypeError, "signal"],
    ["signal a string", task, { signal: "abort" }, TypeError, "signal"],
    ["signal true", task, { signal: true }, TypeError, "signal"],
    ...[
      ["string", "5", TypeError],
      ["null", null, TypeError],
      ["boolean", false, TypeError],
      ["NaN", NaN, RangeError],
      ["Infinity", Infinity, RangeError],
      ["-Infinity", -Infinity, RangeError],
      ["negative", -1, RangeError],
      ["fractional", 2.5, RangeError],
      ["huge", 2 ** 31, RangeError],
    ].map(([what, value, type]) => [`deadlineMs ${what}`, task, { deadlineMs: value }, type, "deadlineMs"]),
  ];

  const limiter = new Limiter({ maxInFlight: 1, maxQueue: 1, queueTimeoutMs: LONG });

  for (const [label, options, type, name] of constructorCases) {
    test(`new Limiter: ${label} -> ${type.name} naming ${name}`, () => {
      assert.throws(
        () => new Limiter(options),
        (error) => {
          assert.equal(error.constructor, type, `${error.constructor.name}: ${error.message}`);
          assert.ok(error.message.includes(name), `message names ${name}: ${error.message}`);
          return true;
        },
      );
    });
  }

  for (const [label, fn, options, type, name] of runCases) {
    test(`run: ${label} -> rejects with ${type.name} naming ${name}`, async () => {
      let promise;
      assert.doesNotThrow(() => (promise = limiter.run(fn, options)), "run rejects, never throws");
      const outcome = await settle(promise);
      assert.equal(outcome.ok, false);
      assert.equal(outcome.error.constructor, type, `${outcome.error.constructor.name}: ${outcome.error.message}`);
      assert.ok(outcome.error.message.includes(name), `message names ${name}: ${outcome.error.message}`);
    });
  }

  test("fetch: invalid edgeshed keys in init reject, naming init.<key>", async () => {
    for (const [init, type, name] of [
      [5, TypeError, "init"],
      [{ deadlineMs: -1 }, RangeError, "init.deadlineMs"],
      [{ deadlineMs: "1" }, TypeError, "init.deadlineMs"],
      [{ signal: {} }, TypeError, "init.signal"],
    ]) {
      const outcome = await settle(limiter.fetch("http://127.0.0.1:9/never", init));
      assert.equal(outcome.error.constructor, type, String(outcome.error));
      assert.ok(outcome.error.message.includes(name), outcome.error.message);
    }
  });

  test("queueTimeoutMs: its messages state the rule (1 to 2147483647 with a queue; none without)", () => {
    const refusal = (options) => {
      try {
        new Limiter(options);
      } catch (error) {
        return `${error.constructor.name}: ${error.message}`;
      }
      return "accepted";
    };
    assert.equal(
      refusal({ maxInFlight: 1, maxQueue: 4, queueTimeoutMs: -5 }),
      "RangeError: options.queueTimeoutMs must be an integer from 1 to 2147483647, got -5",
    );
    assert.equal(
      refusal({ maxInFlight: 1, maxQueue: 0, queueTimeoutMs: 10 }),
      "TypeError: options.queueTimeoutMs needs a queue (options.maxQueue > 0): without one no call waits",
    );
  });

  test("boundary values are accepted", () => {
    assert.equal(new Limiter({ maxInFlight: 1_000_000 }).stats().limit, 1_000_000);
    assert.equal(new Limiter({ maxInFlight: 1, maxQueue: 1_000_000, queueTimeoutMs: 2 ** 31 - 1 }).stats().limit, 1);
    assert.equal(new Limiter({ maxInFlight: 1, maxQueue: 1, queueTimeoutMs: 1 }).stats().limit, 1);
    assert.equal(new Limiter({ maxInFlight: 1, maxQueue: 0, queueTimeoutMs: undefined }).stats().limit, 1);
    assert.equal(new Limiter({ maxInFlight: 2, maxQueue: undefined }).stats().limit, 2);
    assert.equal(new Limiter({ maxInFlight: 1, bodyTimeoutMs: 1 }).stats().limit, 1);
    assert.equal(new Limiter({ maxInFlight: 1, bodyTimeoutMs: 2 ** 31 - 1 }).stats().limit, 1);
    assert.equal(new Limiter({ maxInFlight: 1, bodyTimeoutMs: undefined }).stats().limit, 1);
  });

  test("after every refusal the same Limiter still works and counted nothing", async () => {
    assert.deepEqual(stats(limiter), expect({ inFlight: 0, queued: 0, admitted: 0, shed: 0, queueTimeouts: 0, limit: 1 }));
    const gate = deferred();
    const first = limiter.run(() => gate.promise);
    const second = limiter.run(() => "second", { deadlineMs: LONG, signal: new AbortController().signal });
    assertOverloaded((await settle(limiter.run(() => "third"))).error);
    assert.deepEqual(stats(limiter), expect({ inFlight: 1, queued: 1, admitted: 1, shed: 1, queueTimeouts: 0, limit: 1 }));
    gate.resolve("first");
    assert.deepEqual(await Promise.all([first, second]), ["first", "second"]);
    assert.deepEqual(stats(limiter), expect({ inFlight: 0, queued: 0, admitted: 2, shed: 1, queueTimeouts: 0, limit: 1 }));
  });
});

describe("TypeScript declarations", () => {
  test("pkg/index.d.ts and pkg/edgeshed.d.ts declare the public types", () => {
    const manifest = JSON.parse(readFileSync(join(PKG, "package.json"), "utf8"));
    assert.equal(manifest.types, "index.d.ts");
    assert.equal(manifest.exports["."].types, "./index.d.ts");
    for (const file of ["index.d.ts", "edgeshed.d.ts"]) assert.ok(manifest.files.includes(file), `${file} ships`);
    const index = readFileSync(join(PKG, "index.d.ts"), "utf8");
    const dts = readFileSync(join(PKG, "edgeshed.d.ts"), "utf8");
    for (const name of [
      "Limiter", "LimiterOptions", "AdaptiveOptions", "AdaptiveAlgorithm", "RunOptions", "LimiterStats",
      "OverloadedError", "DeadlineError", "RateLimitedError", "Criticality", "CallClass", "ReserveOptions",
      "QueueDiscipline", "QueueWait", "RateOptions", "CriticalityStats", "OverloadReason", "RateLimitReason",
    ]) {
      assert.match(index, new RegExp(`\\b${name}\\b`), `index.d.ts re-exports ${name}`);
    }
    assert.match(dts, /export class Limiter<O extends LimiterOptions = LimiterOptions>/);
    // setLimit takes no limit on a limiter made with `adaptive`.
    assert.match(dts, /setLimit\(\s*limit: O extends AdaptiveLimiterOptions\s*\? Refused<"edgeshed: setLimit is for a fixed limiter; this one is adaptive \(its algorithm sets the limit\)">\s*: number,\s*\): void;/);
    // Idle, clearing the queue, closing.
    assert.match(dts, /onIdle\(\): Promise<void>;/);
    assert.match(dts, /clearQueue\(\): void;/);
    assert.match(dts, /close\(\): Promise<void>;/);
    // A queue needs its timeout: no queue, or maxQueue with queueTimeoutMs.
    assert.match(dts, /export type QueueOptions = NoQueueOptions \| BoundedQueueOptions;/);
    // Exactly one of maxInFlight and adaptive: a union of the two kinds.
    assert.match(dts, /export type LimiterOptions = FixedLimiterOptions \| AdaptiveLimiterOptions;/);
    for (const name of ["NoQueueOptions", "BoundedQueueOptions", "AdaptiveOptions", "RunOptions", "LimiterStats"]) {
      assert.match(dts, new RegExp(`export interface ${name}\\b`));
    }
    for (const name of ["FixedLimiterOptions", "AdaptiveLimiterOptions"]) {
      assert.match(dts, new RegExp(`export type ${name} = LimiterPolicyOptions & QueueOptions & \\{`));
    }
    for (const key of ["inFlight", "queued", "admitted", "shed", "queueTimeouts", "limit", "fairShareRefused", "rateLimited", "rateOverflow"]) {
      assert.match(dts, new RegExp(`\\b${key}: number;`), `LimiterStats.${key}`);
    }
    assert.match(dts, /topRefusedKeys: RefusedKey\[\];/);
    assert.match(dts, /key: string \| null;/);
    assert.match(dts, /byCriticality: Record<Criticality, CriticalityStats>;/);
  });

  test("the type errors of misuse say what is wrong (both maxInFlight and adaptive, setLimit on an adaptive limiter)", async () => {
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const result = await run(process.execPath, [tsc, "--noEmit", "-p", join(ROOT, "tests/js/fixtures/misuse.tsconfig.json")], {
      cwd: ROOT,
    }).catch((error) => error);
    const output = `${result.stdout}${result.stderr}`;
    assert.notEqual(result.code ?? 0, 0, "the misuse file must not type-check");
    // Each misuse names itself, instead of "parameter of type 'never'" or
    // "Type 'string' is not assignable to type 'AdaptiveAlgorithm'".
    // (tsc names the union member it tried in the lines under the error.)
    assert.match(output, /misuse\.ts\(5,\d+\): error/);
    assert.match(output, /give exactly one of maxInFlight \(a fixed limit\) and adaptive/);
    assert.match(output, /misuse\.ts\(\d+,\d+\)[^\n]*setLimit is for a fixed limiter; this one is adaptive/);
    assert.doesNotMatch(output, /type 'never'/);
  });

  test("tsc --noEmit type-checks a usage file against the package (and its @ts-expect-error lines)", async () => {
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const result = await run(process.execPath, [tsc, "--noEmit", "-p", join(ROOT, "tests/js/fixtures/tsconfig.json")], {
      cwd: ROOT,
    }).catch((error) => error);
    assert.equal(result.code ?? 0, 0, `tsc failed:\n${result.stdout}${result.stderr}`);
  });
});

for (const name of ["readme", "node", "criticality", "fairness", "lifecycle"]) {
  test(`README / docs: the ${name} snippet runs and prints what the document shows`, async () => {
    const { code, output, file } = readmeSnippet(name);
    assert.match(code, /from "edgeshed"/);
    assert.ok(output, `${file} has the snippet's output block`);
    // Written under node_modules/ so that `import "edgeshed"` resolves as in a user's project.
    const dir = join(ROOT, "node_modules", ".cache", "edgeshed-tests");
    mkdirSync(dir, { recursive: true });
    const script = join(dir, `snippet-${name}.mjs`);
    writeFileSync(script, code);
    const { stdout, stderr } = await run(process.execPath, [script], { cwd: dir });
    assert.equal(stderr, "");
    assert.equal(stdout, output);
  });
}
