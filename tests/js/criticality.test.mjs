// Criticality, per-key fair share and rate limits (docs/js.md, "Criticality,
// fair share and rate limits"): the JS face of the core's reserve, ranked
// queue, displacement, fair-share key table and GCRA rate limit.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { Limiter, OverloadedError, RateLimitedError } from "../../pkg/node.js";
import { deferred, isSettled, settle, startOrigin } from "./support/helpers.mjs";

const LONG = 60_000; // a queue timeout no test waits for

/** Starts calls of `criticality` that hold their slot until `gate` resolves, until one is refused; returns the admitted count. */
async function fill(limiter, criticality, gate, held) {
  for (let admitted = 0; ; admitted++) {
    const call = limiter.run(() => gate.promise, { criticality });
    if (await isSettled(call)) {
      const refused = await settle(call);
      assert.equal(refused.ok, false);
      assert.ok(refused.error instanceof OverloadedError, String(refused.error));
      return admitted;
    }
    held.push(call);
  }
}

/**
 * One critical call, run to its end: a sight of a critical call, so the
 * reserve is kept (not lent) for the next 4 x limit arrivals that take the
 * lock. A limiter that has seen no more critical call lends its reserve
 * (docs/js.md, "Reserves that waste nothing").
 */
const seeCritical = (limiter) => limiter.run(() => 1, { criticality: "critical" });

const byClass = (limiter, field) =>
  Object.fromEntries(Object.entries(limiter.stats().byCriticality).map(([name, s]) => [name, s[field]]));

describe("reserves: the share of the limit each criticality may hold", () => {
  for (const [limit, ceilings] of [
    [10, { critical: 10, default: 9, sheddable: 7 }],
    [3, { critical: 3, default: 2, sheddable: 2 }],
    [2, { critical: 2, default: 1, sheddable: 1 }],
    [1, { critical: 1, default: 1, sheddable: 1 }],
  ]) {
    test(`limit ${limit}: critical ${ceilings.critical}, default ${ceilings.default}, sheddable ${ceilings.sheddable} (the default reserve)`, async () => {
      for (const criticality of ["critical", "default", "sheddable"]) {
        const limiter = new Limiter({ maxInFlight: limit });
        await seeCritical(limiter);
        const gate = deferred();
        const held = [];
        assert.equal(await fill(limiter, criticality, gate, held), ceilings[criticality], criticality);
        assert.equal(limiter.stats().byCriticality[criticality].inFlight, ceilings[criticality]);
        gate.resolve();
        await Promise.all(held);
        assert.equal(limiter.stats().inFlight, 0);
      }
    });
  }

  test("an explicit reserve applies from the start; { critical: 0, default: 0 } keeps nothing", async () => {
    const gate = deferred();
    const held = [];
    const kept = new Limiter({ maxInFlight: 10, reserve: { critical: 0.5, default: 0.3 } });
    await seeCritical(kept);
    assert.equal(await fill(kept, "sheddable", gate, held), 2);
    assert.equal(await fill(kept, "default", gate, held), 3);
    const none = new Limiter({ maxInFlight: 10, reserve: { critical: 0, default: 0 } });
    await seeCritical(none);
    assert.equal(await fill(none, "sheddable", gate, held), 10);
    gate.resolve();
    await Promise.all(held);
  });

  test("a limiter whose calls never name a criticality uses its whole limit; the first that does installs the default reserve", async () => {
    const limiter = new Limiter({ maxInFlight: 10 });
    const gate = deferred();
    const plain = Array.from({ length: 10 }, () => limiter.run(() => gate.promise));
    assert.equal(limiter.stats().inFlight, 10);
    gate.resolve();
    await Promise.all(plain);
    await seeCritical(limiter);
    const next = deferred();
    const held = [];
    assert.equal(await fill(limiter, "default", next, held), 9, "the reserve is kept from now on");
    next.resolve();
    await Promise.all(held);
  });
});

describe("reserves that waste nothing", () => {
  test("a limiter whose calls are all of one criticality uses its whole limit; a critical call ends the loan", async () => {
    // The case: limit 3 with the default reserve, only default
    // calls. Kept, the reserve would admit 2 of them.
    const limiter = new Limiter({ maxInFlight: 3 });
    const gate = deferred();
    const held = [];
    assert.equal(await fill(limiter, "default", gate, held), 3, "the reserve is lent: all 3 slots");
    // stats() says so, per criticality.
    const lent = () => Object.fromEntries(Object.entries(limiter.stats().byCriticality).map(([rank, c]) => [rank, c.lent]));
    assert.deepEqual(lent(), { critical: false, default: true, sheddable: false });
    // A critical call finds the slots lent out (no queue: refused), and ends the loan.
    const critical = await settle(limiter.run(() => 1, { criticality: "critical" }));
    assert.equal(critical.error.reason, "limit");
    assert.deepEqual(lent(), { critical: false, default: false, sheddable: false }, "the loan ended");
    gate.resolve();
    await Promise.all(held);
    const next = deferred();
    assert.equal(await fill(limiter, "default", next, held), 2, "kept again once a critical call was seen");
    assert.equal((await settle(limiter.run(() => "ok", { criticality: "critical" }))).value, "ok");
    next.resolve();
    await Promise.all(held);
  });
});

describe("shed order under overload", () => {
  test("sheddable calls are refused before default ones, default ones before critical ones", async () => {
    const limiter = new Limiter({ maxInFlight: 10 });
    await seeCritical(limiter);
    const gate = deferred();
    const held = [];
    // Batch traffic first: it gets its 7 slots, and is refused from then on.
    assert.equal(await fill(limiter, "sheddable", gate, held), 7);
    // Default calls still get in, up to their share (9), then are refused.
    assert.equal(await fill(limiter, "default", gate, held), 2);
    const sheddable = await settle(limiter.run(() => 1, { criticality: "sheddable" }));
    assert.equal(sheddable.error.reason, "limit");
    assert.equal(
      sheddable.error.message,
      "service overloaded: the sheddable calls' share of limit 10 (7, the rest reserved for more critical calls) reached, maxQueue 0: shed at once",
    );
    // A critical call takes the last slot; only then are critical calls refused.
    assert.equal(await fill(limiter, "critical", gate, held), 1);
    const critical = await settle(limiter.run(() => 1, { criticality: "critical" }));
    assert.equal(critical.error.message, "service overloaded: limit 10 reached, maxQueue 0: shed at once");
    assert.deepEqual(byClass(limiter, "inFlight"), { critical: 1, default: 2, sheddable: 7 });
    assert.deepEqual(byClass(limiter, "shed"), { critical: 2, default: 1, sheddable: 2 });
    assert.deepEqual(byClass(limiter, "admitted"), { critical: 2, default: 2, sheddable: 7 });
    assert.equal(limiter.stats().shed, 5);
    gate.resolve();
    await Promise.all(held);
  });

  test("fetch takes criticality and key in its init", async () => {
    const limiter = new Limiter({ maxInFlight: 2 });
    await seeCritical(limiter);
    const gate = deferred();
    const held = limiter.run(() => gate.promise, { criticality: "sheddable" });
    // The one slot left is kept for critical calls: a default fetch is shed before it reaches fetch.
    const refused = await settle(limiter.fetch("http://127.0.0.1:9/never", { criticality: "default", key: "shop" }));
    assert.ok(refused.error instanceof OverloadedError);
    assert.deepEqual(byClass(limiter, "shed"), { critical: 0, default: 1, sheddable: 0 });
    // A critical fetch takes it, and holds it until its body is read.
    const origin = await startOrigin();
    try {
      const pending = limiter.fetch(`${origin.url}/checkout`, { method: "POST", criticality: "critical", key: "shop" });
      const { req, res } = await origin.next("/checkout");
      assert.equal(req.method, "POST");
      assert.deepEqual(byClass(limiter, "inFlight"), { critical: 1, default: 0, sheddable: 1 });
      res.end("ordered");
      assert.equal(await (await pending).text(), "ordered");
      assert.equal(limiter.stats().byCriticality.critical.inFlight, 0);
    } finally {
      await origin.close();
    }
    gate.resolve();
    await held;
  });
});

describe("the queue serves higher criticalities first", () => {
  test("critical, then default (FIFO within one), then sheddable", async () => {
    const limiter = new Limiter({ maxInFlight: 1, maxQueue: 5, queueTimeoutMs: LONG });
    const holder = deferred();
    const first = limiter.run(() => holder.promise, { criticality: "critical" });
    const started = [];
    const calls = [
      ["sheddable", "s1"], ["default", "d1"], ["critical", "c1"], ["default", "d2"], ["sheddable", "s2"],
    ].map(([criticality, name]) => limiter.run(async () => started.push(name), { criticality }));
    assert.deepEqual(byClass(limiter, "queued"), { critical: 1, default: 2, sheddable: 2 });
    holder.resolve();
    await Promise.all([first, ...calls]);
    assert.deepEqual(started, ["c1", "d1", "d2", "s1", "s2"]);
  });
});

describe("displacement from a full queue", () => {
  test("an arrival displaces the newest waiter of the lowest criticality below its own; the displaced slot goes nowhere", async () => {
    const limiter = new Limiter({ maxInFlight: 1, maxQueue: 2, queueTimeoutMs: LONG });
    const holder = deferred();
    const running = limiter.run(() => holder.promise);
    const ran = [];
    const task = (name) => () => ran.push(name);
    const s1 = limiter.run(task("s1"), { criticality: "sheddable" });
    const s2 = settle(limiter.run(task("s2"), { criticality: "sheddable" }));
    // The queue is full: a critical arrival takes the place of the newest sheddable waiter.
    const c1 = limiter.run(task("c1"), { criticality: "critical" });
    const displaced = await s2;
    assert.equal(displaced.ok, false);
    assert.ok(displaced.error instanceof OverloadedError);
    assert.equal(displaced.error.status, 503);
    assert.equal(displaced.error.reason, "displaced");
    assert.equal(displaced.error.message, "service overloaded: displaced from the full queue (maxQueue 2) by a more critical call");
    // Its slot goes nowhere: nothing was admitted for it, the holder still runs alone.
    let s = limiter.stats();
    assert.deepEqual([s.inFlight, s.queued, s.admitted], [1, 2, 1]);
    assert.deepEqual(byClass(limiter, "displaced"), { critical: 0, default: 0, sheddable: 1 });
    assert.deepEqual(byClass(limiter, "queued"), { critical: 1, default: 0, sheddable: 1 });
    // A sheddable arrival cannot displace anyone (none below it): shed.
    const s3 = await settle(limiter.run(task("s3"), { criticality: "sheddable" }));
    assert.equal(s3.error.reason, "limit");
    // A default arrival displaces the remaining sheddable waiter.
    const d1 = limiter.run(task("d1"), { criticality: "default" });
    assert.equal((await settle(s1)).error.reason, "displaced");
    holder.resolve();
    await Promise.all([running, c1, d1]);
    assert.deepEqual(ran, ["c1", "d1"], "displaced and shed calls never ran");
    s = limiter.stats();
    assert.deepEqual([s.inFlight, s.queued, s.admitted], [0, 0, 3]);
    assert.deepEqual(byClass(limiter, "displaced"), { critical: 0, default: 0, sheddable: 2 });
    assert.deepEqual(byClass(limiter, "shed"), { critical: 0, default: 0, sheddable: 1 });
  });
});

describe("per-key fair share", () => {
  test("a key alone may use the whole limit; over its share while another key waits it gets 429 fair_share", async () => {
    const limiter = new Limiter({ maxInFlight: 4, maxQueue: 4, queueTimeoutMs: LONG });
    const gate = deferred();
    const a = Array.from({ length: 4 }, () => limiter.run(() => gate.promise, { key: "a" }));
    assert.equal(limiter.stats().inFlight, 4, "work-conserving: one key takes every slot");
    const b = limiter.run(() => "b", { key: "b" });
    assert.equal(limiter.stats().queued, 1);
    // Two keys now: a's share is 2 of 4 and it holds 4 while b waits.
    const refused = await settle(limiter.run(() => "a5", { key: "a" }));
    assert.ok(refused.error instanceof RateLimitedError, String(refused.error));
    assert.equal(refused.error.name, "RateLimitedError");
    assert.equal(refused.error.status, 429);
    assert.equal(refused.error.reason, "fair_share");
    assert.equal(refused.error.retryAfterMs, undefined);
    assert.match(refused.error.message, /fair share of limit 4/);
    // b is within its share: it queues.
    const b2 = limiter.run(() => "b2", { key: "b" });
    assert.equal(limiter.stats().queued, 2);
    const s = limiter.stats();
    assert.deepEqual([s.fairShareRefused, s.rateLimited, s.shed], [1, 0, 0]);
    gate.resolve();
    await Promise.all(a);
    assert.deepEqual(await Promise.all([b, b2]), ["b", "b2"]);
  });
});

describe("rate limits", () => {
  test("over the rate: 429 with reason rate and retryAfterMs; each key has its own allowance", async () => {
    const limiter = new Limiter({ maxInFlight: 10, rate: { perSecond: 1, burst: 2 } });
    assert.equal(await limiter.run(() => 1, { key: "x" }), 1);
    assert.equal(await limiter.run(() => 2, { key: "x" }), 2);
    const refused = await settle(limiter.run(() => 3, { key: "x" }));
    assert.ok(refused.error instanceof RateLimitedError);
    assert.deepEqual([refused.error.status, refused.error.reason], [429, "rate"]);
    assert.ok(refused.error.retryAfterMs > 0 && refused.error.retryAfterMs <= 1000, String(refused.error.retryAfterMs));
    assert.equal(refused.error.message, `rate limited: over the rate limit; retry after ${refused.error.retryAfterMs} ms`);
    assert.equal(await limiter.run(() => "y", { key: "y" }), "y", "another key has its own allowance");
    // Calls without a key share one allowance.
    const unkeyed = [];
    for (let i = 0; i < 3; i++) unkeyed.push(await settle(limiter.run(() => i)));
    assert.deepEqual(unkeyed.map((r) => r.ok), [true, true, false]);
    const s = limiter.stats();
    assert.deepEqual([s.rateLimited, s.fairShareRefused, s.shed, s.admitted], [2, 0, 0, 5]);
  });

  test("perMinute, and fetch is rate limited before it reaches the network", async () => {
    const limiter = new Limiter({ maxInFlight: 1, rate: { perMinute: 1 } });
    assert.equal(await limiter.run(() => "once"), "once");
    const refused = await settle(limiter.fetch("http://127.0.0.1:9/never"));
    assert.equal(refused.error.reason, "rate");
    assert.ok(refused.error.retryAfterMs > 1000 && refused.error.retryAfterMs <= 60_000);
  });
});

describe("the codel queue", () => {
  // Real timers (the JS face reads the host's clock); the margins are tens of ms.
  const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  test("a queue that has emptied recently gives queueTimeoutMs; one standing longer gives codelTargetMs and serves newest first", async () => {
    // b waits from ~300 ms to ~900 ms; everything after the switch (~700 ms)
    // happens before b's timeout, with ~150 ms to spare.
    const limiter = new Limiter({ maxInFlight: 1, maxQueue: 10, queueTimeoutMs: 600, queueDiscipline: "codel", codelTargetMs: 40 });
    const holder = deferred();
    const running = limiter.run(() => holder.promise);
    const ran = [];
    const a = settle(limiter.run(() => ran.push("a")));
    await pause(300);
    const b = settle(limiter.run(() => ran.push("b")));
    const aOutcome = await a; // at ~600 ms: the queue has stood since 0 (b keeps it standing)
    assert.equal(aOutcome.error.reason, "queue_timeout", "a waited queueTimeoutMs");
    await pause(100); // standing for ~700 ms > queueTimeoutMs
    const startedC = performance.now();
    const cOutcome = await settle(limiter.run(() => ran.push("c")));
    const waited = performance.now() - startedC;
    assert.equal(cOutcome.error.reason, "queue_timeout");
    assert.equal(cOutcome.error.message, "service overloaded: waited queueTimeoutMs 600 for a slot of limit 1 (maxQueue 10): queue timeout");
    assert.ok(waited < 150, `c got codelTargetMs (40), not queueTimeoutMs (600): waited ${waited.toFixed(0)} ms`);
    assert.equal(await isSettled(b), false, "b, queued before the queue stood, keeps its queueTimeoutMs");
    // Newest first while the queue stands: d (queued after b) is served before b;
    // b, which has waited far longer than codelTargetMs when it reaches the
    // head of a standing queue, is refused there (stale) instead of served.
    const d = limiter.run(() => ran.push("d"));
    holder.resolve();
    await running;
    await d;
    const bOutcome = await b;
    assert.equal(bOutcome.error?.reason, "queue_timeout", `b was refused at the head: ${bOutcome.error ?? "served"}`);
    assert.deepEqual(ran, ["d"]);
    assert.equal(limiter.stats().queueTimeouts, 3);
  });
});

describe("option errors name the option", () => {
  const cases = [
    [{ maxInFlight: 1, reserve: 0.1 }, TypeError, /^options\.reserve must be an object/],
    [{ maxInFlight: 1, reserve: { critical: "0.1" } }, TypeError, /^options\.reserve\.critical must be a number/],
    [{ maxInFlight: 1, reserve: { critical: 1.5 } }, RangeError, /^options\.reserve\.critical must be a fraction/],
    [{ maxInFlight: 1, reserve: { default: -0.1 } }, RangeError, /^options\.reserve\.default must be a fraction/],
    [{ maxInFlight: 1, reserve: { critical: NaN } }, RangeError, /^options\.reserve\.critical/],
    [{ maxInFlight: 1, reserve: { critical: 0.6, default: 0.6 } }, RangeError, /^options\.reserve\.critical \+ options\.reserve\.default must not exceed 1/],
    // The sum as written, not 1.2999999999999998 (issue 33, 10).
    [{ maxInFlight: 1, reserve: { critical: 0.7, default: 0.6 } }, RangeError, /^options\.reserve\.critical \+ options\.reserve\.default must not exceed 1 \(the whole limit\), got 1\.3$/],
    [{ maxInFlight: 1, reserve: { sheddable: 0.1 } }, TypeError, /^options\.reserve\.sheddable is not a known option/],
    [{ maxInFlight: 1, queueDiscipline: "lifo" }, TypeError, /^options\.queueDiscipline must be "fifo" or "codel", got "lifo"/],
    [{ maxInFlight: 1, queueDiscipline: "codel" }, TypeError, /^options\.queueDiscipline "codel" needs a queue/],
    [{ maxInFlight: 1, maxQueue: 1, queueTimeoutMs: 5, queueDiscipline: "codel" }, RangeError, /^options\.codelTargetMs \(5 by default\) must be shorter than options\.queueTimeoutMs \(5\)/],
    [{ maxInFlight: 1, maxQueue: 1, queueTimeoutMs: 50, queueDiscipline: "codel", codelTargetMs: 0 }, RangeError, /^options\.codelTargetMs must be an integer/],
    [{ maxInFlight: 1, maxQueue: 1, queueTimeoutMs: 50, codelTargetMs: 5 }, TypeError, /^options\.codelTargetMs needs options\.queueDiscipline "codel"/],
    [{ maxInFlight: 1, rate: {} }, TypeError, /^options\.rate needs exactly one of options\.rate\.perSecond and options\.rate\.perMinute/],
    [{ maxInFlight: 1, rate: { perSecond: 1, perMinute: 1 } }, TypeError, /exactly one of/],
    [{ maxInFlight: 1, rate: { perSecond: 0 } }, RangeError, /^options\.rate\.perSecond must be an integer/],
    [{ maxInFlight: 1, rate: { perSecond: 1, burst: 0 } }, RangeError, /^options\.rate\.burst must be an integer/],
    [{ maxInFlight: 1, rate: { perSecond: 1, maxKeys: 1.5 } }, RangeError, /^options\.rate\.maxKeys must be an integer/],
    [{ maxInFlight: 1, rate: { perSecond: 1, perHour: 1 } }, TypeError, /^options\.rate\.perHour is not a known option/],
  ];
  for (const [options, type, message] of cases) {
    test(`new Limiter(${JSON.stringify(options)}) throws ${type.name} ${message}`, () => {
      assert.throws(() => new Limiter(options), (error) => {
        assert.equal(error.constructor, type, error.message);
        assert.match(error.message, message);
        return true;
      });
    });
  }

  test("run and fetch refuse a bad criticality or key (rejecting with a TypeError naming it)", async () => {
    const limiter = new Limiter({ maxInFlight: 1 });
    for (const [call, message] of [
      [() => limiter.run(() => 1, { criticality: "urgent" }), /^options\.criticality must be "critical", "default" or "sheddable", got "urgent"/],
      [() => limiter.run(() => 1, { criticality: 2 }), /^options\.criticality must be .*, got 2/],
      [() => limiter.run(() => 1, { key: 7 }), /^options\.key must be a string/],
      [() => limiter.fetch("http://127.0.0.1:9/", { criticality: "CRITICAL" }), /^init\.criticality must be/],
      [() => limiter.fetch("http://127.0.0.1:9/", { key: {} }), /^init\.key must be a string/],
      [() => limiter.fetch("http://127.0.0.1:9/", { critcality: "critical" }), /^init\.critcality is not an option: did you mean init\.criticality\?/],
    ]) {
      const outcome = await settle(call());
      assert.ok(outcome.error instanceof TypeError, String(outcome.error));
      assert.match(outcome.error.message, message);
    }
    assert.deepEqual([limiter.stats().admitted, limiter.stats().inFlight], [0, 0]);
    // A refused option leaves nothing behind for the next call: it is a plain default call.
    assert.equal(await limiter.run(() => "next"), "next");
    assert.deepEqual(limiter.stats().byCriticality.default.admitted, 1);
  });
});

describe("stats show what the limit allows", () => {
  test("reserve and ceilings: none until a call names its criticality, then the default reserve's ceilings at the current limit", async () => {
    const limiter = new Limiter({ maxInFlight: 3 });
    assert.equal(limiter.stats().reserve, null);
    assert.deepEqual(limiter.stats().ceilings, { critical: 3, default: 3, sheddable: 3 });
    await limiter.run(() => 1, { criticality: "default" });
    const { reserve, ceilings } = limiter.stats();
    assert.deepEqual(reserve, { critical: 0.1, default: 0.2 });
    // The origin of 3: default calls may hold 2 while the reserve is kept.
    assert.deepEqual(ceilings, { critical: 3, default: 2, sheddable: 2 });
    limiter.setLimit(10);
    assert.deepEqual(limiter.stats().ceilings, { critical: 10, default: 9, sheddable: 7 });
    // The fields sit after `limit`, in the table's order.
    const keys = Object.keys(limiter.stats());
    assert.deepEqual(keys.slice(keys.indexOf("limit"), keys.indexOf("limit") + 3), ["limit", "reserve", "ceilings"]);
  });

  test("a reserve given in the options is in force at once; a zero reserve is none", () => {
    const given = new Limiter({ maxInFlight: 10, reserve: { critical: 0.25, default: 0.25 } });
    assert.deepEqual(given.stats().reserve, { critical: 0.25, default: 0.25 });
    assert.deepEqual(given.stats().ceilings, { critical: 10, default: 7, sheddable: 5 });
    const none = new Limiter({ maxInFlight: 10, reserve: { critical: 0, default: 0 } });
    assert.equal(none.stats().reserve, null);
    assert.deepEqual(none.stats().ceilings, { critical: 10, default: 10, sheddable: 10 });
  });
});
