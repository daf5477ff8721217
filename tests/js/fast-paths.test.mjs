// The fast paths of the JS face (issue 15): a `run` whose fn returns a plain
// value frees its slot at once (its work is done), the shed path's error
// keeps its class, name, message and status, and a limiter that has held
// `fetch` bodies still sweeps them after others ended.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { ROOT } from "./support/link-package.mjs";
import { deferred } from "./support/helpers.mjs";

const { Limiter, OverloadedError, DeadlineError } = await import("edgeshed");
const LONG = 60_000;

describe("run with a synchronous fn", () => {
  test("a plain value frees the slot before run returns, and still resolves", async () => {
    const limiter = new Limiter({ maxInFlight: 1, maxQueue: 0 });
    const first = limiter.run(() => 1);
    assert.equal(limiter.stats().inFlight, 0, "slot free at once");
    // The slot is free: a second call is admitted, not shed.
    const second = limiter.run(() => "two");
    assert.equal(limiter.stats().shed, 0);
    assert.equal(await first, 1);
    assert.equal(await second, "two");
    assert.equal(await limiter.run(() => undefined), undefined);
    assert.equal(await limiter.run(() => null), null);
  });

  test("an object or a thenable still holds the slot until it settles", async () => {
    const limiter = new Limiter({ maxInFlight: 1, maxQueue: 0 });
    const object = { n: 1 };
    assert.equal(await limiter.run(() => object), object);
    const gate = deferred();
    const thenable = { then: (ok, fail) => gate.promise.then(ok, fail) };
    const held = limiter.run(() => thenable);
    assert.equal(limiter.stats().inFlight, 1, "held while the thenable is pending");
    gate.resolve(7);
    assert.equal(await held, 7);
    assert.equal(limiter.stats().inFlight, 0);
  });

  test("a queued call returning a plain value frees its slot for the next", async () => {
    const limiter = new Limiter({ maxInFlight: 1, maxQueue: 2, queueTimeoutMs: LONG });
    const gate = deferred();
    const holder = limiter.run(() => gate.promise);
    const queued = [limiter.run(() => 1), limiter.run(() => 2)];
    assert.equal(limiter.stats().queued, 2);
    gate.resolve(0);
    assert.deepEqual(await Promise.all([holder, ...queued]), [0, 1, 2]);
    assert.equal(limiter.stats().inFlight, 0);
    assert.equal(limiter.stats().admitted, 3);
  });

  test("an adaptive limiter samples a synchronous call, then frees its slot", async () => {
    const limiter = new Limiter({ adaptive: { algorithm: "aimd", initialLimit: 1, minLimit: 1, maxLimit: 8 } });
    const first = limiter.run(() => 1);
    assert.equal(limiter.stats().inFlight, 0);
    assert.equal(await first, 1);
    // Sampled (holding its permit: the limit in use) as a success: aimd adds one.
    assert.equal(limiter.stats().limit, 2, "the call was sampled");
  });
});

describe("the shed path's errors", () => {
  test("a shed rejects with an OverloadedError: own status and reason, name and message by class", async () => {
    const limiter = new Limiter({ maxInFlight: 1, maxQueue: 0 });
    const gate = deferred();
    const holder = limiter.run(() => gate.promise);
    const error = await limiter.run(() => 1).then(
      () => assert.fail("admitted"),
      (e) => e,
    );
    assert.ok(error instanceof OverloadedError && error instanceof Error);
    assert.equal(error.name, "OverloadedError");
    assert.equal(error.message, "service overloaded: limit 1 reached, maxQueue 0: shed at once");
    assert.equal(error.status, 503);
    assert.equal(String(error), "OverloadedError: service overloaded: limit 1 reached, maxQueue 0: shed at once");
    assert.deepEqual(JSON.parse(JSON.stringify(error)), { status: 503, reason: "limit" });
    gate.resolve();
    await holder;
  });

  test("the exported classes keep their defaults and take a message", () => {
    assert.equal(new OverloadedError().message, "service overloaded");
    assert.equal(new OverloadedError("x").message, "x");
    assert.equal(new OverloadedError().name, "OverloadedError");
    assert.equal(new DeadlineError().message, "deadline expired");
    assert.equal(new DeadlineError().name, "DeadlineError");
    assert.equal(new DeadlineError().status, 504);
  });
});

// `run`'s fast start (crates/edgeshed-js/src/call/free.rs): a call without a
// signal or deadline that finds a free slot is admitted by one number-returning
// call into the wasm; it must count exactly as the whole path counts it.
describe("run's fast start", () => {
  test("a keyed call admitted at once holds its key's share: a third call of that key is refused while another key waits", async () => {
    const limiter = new Limiter({ maxInFlight: 2, maxQueue: 4, queueTimeoutMs: LONG });
    const gate = deferred();
    const a1 = limiter.run(() => gate.promise, { key: "a" });
    const a2 = limiter.run(() => gate.promise, { key: "a" });
    assert.equal(limiter.stats().inFlight, 2);
    const b = limiter.run(() => "b", { key: "b" });
    assert.equal(limiter.stats().queued, 1, "b waits");
    // a holds both slots, over its share of 1 while b waits: 429 at once.
    await assert.rejects(limiter.run(() => "a3", { key: "a" }), (error) => error.status === 429 && error.reason === "fair_share");
    gate.resolve(0);
    assert.deepEqual(await Promise.all([a1, a2, b]), [0, 0, "b"]);
    const stats = limiter.stats();
    assert.equal(stats.inFlight, 0);
    assert.equal(stats.admitted, 3);
    assert.equal(stats.fairShareRefused, 1);
  });

  test("a call that names its criticality puts the default reserve in place, as on the whole path", async () => {
    const limiter = new Limiter({ maxInFlight: 10 });
    const before = limiter.stats().reserve;
    assert.equal(await limiter.run(() => 1, { criticality: "critical" }), 1);
    assert.notDeepEqual(limiter.stats().reserve, before, "the default reserve applies once a call names its criticality");
    assert.equal(limiter.stats().byCriticality.critical.admitted, 1);
  });

  test("every way a task ends returns its permit: value, promise, rejection, synchronous throw", async () => {
    const limiter = new Limiter({ maxInFlight: 1, maxQueue: 0 });
    assert.equal(await limiter.run(() => 1), 1);
    assert.equal(await limiter.run(async () => 2), 2);
    await assert.rejects(limiter.run(async () => Promise.reject(new Error("no"))), /no/);
    await assert.rejects(
      limiter.run(() => {
        throw new Error("thrown");
      }),
      /thrown/,
    );
    assert.equal(limiter.stats().inFlight, 0);
    assert.equal(await limiter.run(() => "still admitted"), "still admitted");
    assert.equal(limiter.stats().shed, 0);
  });

  test("an engine without Error.captureStackTrace (not V8) still runs, sheds and returns every permit", () => {
    const script = `
      delete Error.captureStackTrace;
      const { Limiter, OverloadedError } = await import("edgeshed");
      const l = new Limiter({ maxInFlight: 1 });
      let open; const held = l.run(() => new Promise((r) => (open = r)));
      const shed = await l.run(() => 1).catch((e) => e);
      if (!(shed instanceof OverloadedError) || shed.status !== 503) throw new Error("no shed: " + shed);
      open(5);
      if ((await held) !== 5 || (await l.run(() => 6)) !== 6) throw new Error("wrong results");
      if (l.stats().inFlight !== 0 || l.stats().shed !== 1) throw new Error(JSON.stringify(l.stats()));
      console.log("ok");
    `;
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: ROOT, encoding: "utf8", timeout: 30_000 });
    assert.equal(child.status, 0, child.stderr);
    assert.equal(child.stdout.trim(), "ok");
  });
});
