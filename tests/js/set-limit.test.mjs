// The npm package's limit options (issue 13): `adaptive` validated key by
// key, exactly one of `maxInFlight` and `adaptive`, and a fixed limiter's
// `setLimit(n)` raising and lowering the limit under queued and running work.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import "./support/link-package.mjs";
import { deferred, isSettled, settle } from "./support/helpers.mjs";

const { Limiter } = await import("edgeshed");
const LONG = 60_000; // a queue timeout no test waits for

/** `new Limiter(options)` throws a `type` whose message names `name`. */
function assertRefused(options, type, name) {
  assert.throws(
    () => new Limiter(options),
    (error) => {
      assert.equal(error.constructor, type, `${error.constructor.name}: ${error.message}`);
      assert.ok(error.message.includes(name), `message names ${name}: ${error.message}`);
      return true;
    },
  );
}

describe("options.adaptive", () => {
  const A = (adaptive, rest = {}) => ({ adaptive, ...rest });
  const cases = [
    ["both maxInFlight and adaptive", { maxInFlight: 4, adaptive: { algorithm: "aimd" } }, TypeError, "options.maxInFlight and options.adaptive"],
    ["neither", { maxQueue: 0 }, TypeError, "options.maxInFlight (a fixed limit) or options.adaptive"],
    ["adaptive null", A(null), TypeError, "options.adaptive"],
    ["adaptive a number", A(6), TypeError, "options.adaptive"],
    ["adaptive a string", A("gradient2"), TypeError, "options.adaptive"],
    ["algorithm missing", A({}), TypeError, "options.adaptive.algorithm"],
    ["algorithm a number", A({ algorithm: 2 }), TypeError, "options.adaptive.algorithm"],
    ["unknown algorithm", A({ algorithm: "gradient" }), TypeError, '"gradient"'],
    ["algorithm in another case", A({ algorithm: "AIMD" }), TypeError, '"AIMD"'],
    ["unknown key inside adaptive", A({ algorithm: "aimd", maxlimit: 8 }), TypeError, "options.adaptive.maxlimit"],
    ["a throwing getter", A({ get algorithm() { throw new Error("boom"); } }), TypeError, "options.adaptive.algorithm"],
    ...["initialLimit", "minLimit", "maxLimit"].flatMap((key) => [
      [`${key} a string`, A({ algorithm: "vegas", [key]: "6" }), TypeError, `options.adaptive.${key}`],
      [`${key} null`, A({ algorithm: "vegas", [key]: null }), TypeError, `options.adaptive.${key}`],
      [`${key} zero`, A({ algorithm: "vegas", [key]: 0 }), RangeError, `options.adaptive.${key}`],
      [`${key} fractional`, A({ algorithm: "vegas", [key]: 2.5 }), RangeError, `options.adaptive.${key}`],
      [`${key} NaN`, A({ algorithm: "vegas", [key]: NaN }), RangeError, `options.adaptive.${key}`],
      [`${key} huge`, A({ algorithm: "vegas", [key]: 1_000_001 }), RangeError, `options.adaptive.${key}`],
    ]),
    ["minLimit above maxLimit", A({ algorithm: "aimd", minLimit: 10, maxLimit: 5 }), RangeError, "options.adaptive.minLimit (10)"],
    ["minLimit above the default maxLimit", A({ algorithm: "aimd", minLimit: 100 }), RangeError, "options.adaptive.maxLimit (64"],
    ["initialLimit below minLimit", A({ algorithm: "aimd", initialLimit: 2, minLimit: 3 }), RangeError, "options.adaptive.initialLimit (2)"],
    ["initialLimit above the default maxLimit", A({ algorithm: "aimd", initialLimit: 65 }), RangeError, "options.adaptive.initialLimit (65)"],
    ["maxQueue still validated", A({ algorithm: "aimd" }, { maxQueue: 2 }), TypeError, "options.queueTimeoutMs"],
  ];
  for (const [label, options, type, name] of cases) {
    test(`${label} -> ${type.name} naming ${name}`, () => assertRefused(options, type, name));
  }

  test("defaults: initial 6 within [1, 64], moved into the given range", () => {
    assert.equal(new Limiter({ adaptive: { algorithm: "gradient2" } }).stats().limit, 6);
    assert.equal(new Limiter({ adaptive: { algorithm: "aimd", minLimit: 10 } }).stats().limit, 10);
    assert.equal(new Limiter({ adaptive: { algorithm: "vegas", maxLimit: 3 } }).stats().limit, 3);
    const given = new Limiter({ adaptive: { algorithm: "vegas", initialLimit: 20, minLimit: 2, maxLimit: 40 }, maxQueue: 4, queueTimeoutMs: 20 });
    assert.equal(given.stats().limit, 20);
    const max = new Limiter({ adaptive: { algorithm: "aimd", initialLimit: 1_000_000, maxLimit: 1_000_000 } });
    assert.equal(max.stats().limit, 1_000_000);
  });
});

describe("setLimit", () => {
  test("invalid limits throw naming limit; the limit is unchanged", () => {
    const limiter = new Limiter({ maxInFlight: 3 });
    for (const [value, type] of [
      ["4", TypeError], [null, TypeError], [undefined, TypeError], [4n, TypeError],
      [0, RangeError], [-1, RangeError], [1.5, RangeError], [NaN, RangeError], [Infinity, RangeError], [1_000_001, RangeError],
    ]) {
      assert.throws(() => limiter.setLimit(value), (error) => {
        assert.equal(error.constructor, type, `${String(value)}: ${error.message}`);
        assert.match(error.message, /^limit must be/);
        return true;
      });
    }
    assert.equal(limiter.stats().limit, 3);
  });

  test("an adaptive limiter refuses: its algorithm sets the limit", () => {
    const limiter = new Limiter({ adaptive: { algorithm: "aimd" } });
    assert.throws(() => limiter.setLimit(10), (error) => {
      assert.equal(error.constructor, TypeError);
      assert.match(error.message, /managed by its adaptive algorithm/);
      return true;
    });
    assert.equal(limiter.stats().limit, 6);
  });

  test("raising the limit admits queued calls at once, in FIFO order", async () => {
    const limiter = new Limiter({ maxInFlight: 1, maxQueue: 4, queueTimeoutMs: LONG });
    const started = [];
    const gates = [0, 1, 2, 3].map(() => deferred());
    const calls = gates.map((gate, i) => limiter.run(() => (started.push(i), gate.promise)));
    assert.deepEqual(started, [0]);
    assert.equal(limiter.stats().queued, 3);

    limiter.setLimit(3);
    // Handed their slots at once (counted in inFlight), started in order.
    const s = limiter.stats();
    assert.deepEqual([s.inFlight, s.queued, s.limit], [3, 1, 3]);
    await isSettled(calls[1]);
    assert.deepEqual(started, [0, 1, 2]);
    gates.forEach((gate, i) => gate.resolve(i));
    assert.deepEqual(await Promise.all(calls), [0, 1, 2, 3]);
    assert.equal(limiter.stats().inFlight, 0);
  });

  test("lowering the limit never preempts running calls; none is admitted until fewer than the new limit run", async () => {
    const limiter = new Limiter({ maxInFlight: 4, maxQueue: 4, queueTimeoutMs: LONG });
    let running = 0;
    let peakAfterLowering = 0;
    let lowered = false;
    const started = [];
    const task = (i, gate) => async () => {
      started.push(i);
      running++;
      if (lowered) peakAfterLowering = Math.max(peakAfterLowering, running);
      try {
        return await gate.promise;
      } finally {
        running--;
      }
    };
    const gates = [0, 1, 2, 3, 4, 5].map(() => deferred());
    const calls = gates.map((gate, i) => settle(limiter.run(task(i, gate))));
    assert.deepEqual(started, [0, 1, 2, 3]);

    limiter.setLimit(2);
    lowered = true;
    let s = limiter.stats();
    assert.deepEqual([s.inFlight, s.queued, s.limit], [4, 2, 2], "the four running keep their slots");
    // Running work is not interrupted: each finishes with its own value.
    for (const i of [0, 1]) {
      gates[i].resolve(`v${i}`);
      assert.deepEqual(await calls[i], { ok: true, value: `v${i}` });
    }
    s = limiter.stats();
    assert.deepEqual([s.inFlight, s.queued], [2, 2], "two returned slots are retired, not handed on");
    assert.deepEqual(started, [0, 1, 2, 3]);

    gates[2].resolve("v2");
    assert.deepEqual(await calls[2], { ok: true, value: "v2" });
    await isSettled(calls[4]);
    assert.deepEqual(started, [0, 1, 2, 3, 4], "one call admitted once fewer than 2 run");
    for (const i of [3, 4, 5]) gates[i].resolve(`v${i}`);
    const rest = await Promise.all(calls.slice(3));
    assert.deepEqual(rest.map((r) => r.value), ["v3", "v4", "v5"]);
    assert.ok(peakAfterLowering <= 4, "nothing beyond the running ones");
    assert.equal(limiter.stats().inFlight, 0);
  });

  test("after lowering, in-flight never exceeds the new limit once the old calls are done", async () => {
    const limiter = new Limiter({ maxInFlight: 5, maxQueue: 20, queueTimeoutMs: LONG });
    const first = [0, 1, 2, 3, 4].map(() => deferred());
    const old = first.map((gate) => limiter.run(() => gate.promise));
    limiter.setLimit(2);
    let running = 0;
    let peak = 0;
    const later = Array.from({ length: 10 }, (_, i) =>
      limiter.run(async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((resolve) => setImmediate(resolve));
        running--;
        return i;
      }),
    );
    first.forEach((gate) => gate.resolve());
    await Promise.all(old);
    assert.deepEqual(await Promise.all(later), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.equal(peak, 2);
    assert.equal(limiter.stats().inFlight, 0);
  });
});
