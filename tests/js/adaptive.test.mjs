// Adaptive limits in the npm package (issue 13): the limit falls on drops
// and rising latency and rises on fast successes; every call is classified
// once by the core as served, dropped or ignored (issue 21). Time is a
// controllable clock: the package reads `performance.now()` at each call's
// admission and end, and `performance.timeOrigin + performance.now()` as the
// wall clock its drains are scheduled on, so the tests set both (no sleeps;
// gates decide when work settles).
import { test, describe, beforeEach, afterEach, after, before } from "node:test";
import assert from "node:assert/strict";
import "./support/link-package.mjs";
import { deferred, settle, startOrigin } from "./support/helpers.mjs";

const { Limiter, OverloadedError, DeadlineError } = await import("edgeshed");

const clock = { now: 1_000 };
const realNow = performance.now;
// A fixed time origin: the drains fall on the same fake times in every run.
const ORIGIN = 1_700_000_000_000;
beforeEach(() => {
  clock.now = 1_000;
  performance.now = () => clock.now;
  Object.defineProperty(performance, "timeOrigin", { value: ORIGIN, configurable: true });
});
afterEach(() => {
  performance.now = realNow;
  delete performance.timeOrigin;
});

const overload = (status) => Object.assign(new Error(`origin answered ${status}`), { status });

/**
 * One round trip: as many calls as the limit admits start together, take
 * `rttMs` of clock time, and settle with `outcome(i)` (a value, or an
 * Error to reject with). Returns the limit after the round.
 */
async function round(limiter, rttMs, outcome = () => "ok", count = limiter.stats().limit) {
  const gates = Array.from({ length: count }, () => deferred());
  const calls = gates.map((gate) => settle(limiter.run(() => gate.promise)));
  clock.now += rttMs;
  gates.forEach((gate, i) => {
    const result = outcome(i);
    if (result instanceof Error) gate.reject(result);
    else gate.resolve(result);
  });
  const outcomes = await Promise.all(calls);
  // Every call was admitted (none shed) and every slot came back.
  assert.ok(outcomes.every((o) => !(o.error instanceof OverloadedError)), "no call shed");
  assert.equal(limiter.stats().inFlight, 0);
  clock.now += 1;
  return limiter.stats().limit;
}

async function rounds(limiter, n, rttMs, outcome) {
  const limits = [];
  for (let i = 0; i < n; i++) limits.push(await round(limiter, rttMs, outcome));
  return limits;
}

describe("aimd", () => {
  test("503 and 429 rejections back the limit off, once per round trip, down to minLimit", async () => {
    const limiter = new Limiter({ adaptive: { algorithm: "aimd", initialLimit: 10, minLimit: 2, maxLimit: 20 } });
    const limits = await rounds(limiter, 12, 5, (i) => (i === 0 ? overload(i % 2 ? 429 : 503) : "ok"));
    assert.deepEqual(limits.slice(0, 4), [9, 8, 7, 6], "one backoff (x0.9, whole slots) per round");
    assert.equal(limits.at(-1), 2, "never below minLimit");
    const with429 = new Limiter({ adaptive: { algorithm: "aimd", initialLimit: 10 } });
    assert.equal(await round(with429, 5, () => overload(429)), 9);
  });

  test("a DeadlineError rejection from fn is ignored (a caller's deadline); other errors are served", async () => {
    const deadline = new Limiter({ adaptive: { algorithm: "aimd", initialLimit: 10 } });
    assert.equal(await round(deadline, 5, () => new DeadlineError()), 10);
    const plain = new Limiter({ adaptive: { algorithm: "aimd", initialLimit: 10 } });
    for (const error of [new Error("bug"), overload(500), overload(504), overload("503")]) {
      assert.equal(await round(plain, 5, () => error, 1), 10, `${error.message} is no drop`);
    }
    // A synchronous throw is classified the same way.
    const thrown = await settle(plain.run(() => { throw overload(503); }));
    assert.equal(thrown.error.status, 503);
    assert.equal(plain.stats().limit, 9);
  });

  test("fast successes with the limit in use raise it, up to maxLimit", async () => {
    const limiter = new Limiter({ adaptive: { algorithm: "aimd", initialLimit: 4, maxLimit: 8 } });
    const limits = await rounds(limiter, 10, 5);
    assert.ok(limits[1] > 4, `rises: ${limits}`);
    assert.deepEqual(limits.slice(-2), [8, 8], "stops at maxLimit");
    // Below half the limit in use, successes say nothing: no growth.
    const idle = new Limiter({ adaptive: { algorithm: "aimd", initialLimit: 10 } });
    for (let i = 0; i < 20; i++) assert.equal(await round(idle, 5, () => "ok", 1), 10);
  });

  test("a call whose caller aborted it is not sampled, even if its work then ends in a 503", async () => {
    const limiter = new Limiter({ adaptive: { algorithm: "aimd", initialLimit: 3 } });
    const gate = deferred();
    const controller = new AbortController();
    const call = settle(limiter.run(() => gate.promise, { signal: controller.signal }));
    controller.abort(new Error("caller left"));
    assert.equal((await call).error.message, "caller left");
    gate.reject(overload(503)); // the abandoned work ends in an overload answer
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(limiter.stats().inFlight, 0);
    assert.equal(limiter.stats().limit, 3, "no backoff");
  });
});

describe("latency-driven algorithms", () => {
  /** Rounds at `rttMs` until `done(limit)` or `max` rounds; returns the limits seen. */
  async function until(limiter, rttMs, done, max, outcome) {
    const limits = [];
    while (limits.length < max) {
      limits.push(await round(limiter, rttMs, outcome));
      if (done(limits.at(-1))) break;
    }
    return limits;
  }

  for (const algorithm of ["gradient2", "vegas"]) {
    test(`${algorithm}: a warm start at the initial limit, slow start, falls when latency rises and recovers`, async () => {
      const limiter = new Limiter({ adaptive: { algorithm, initialLimit: 20, minLimit: 2, maxLimit: 40 } });
      // The first finished call starts the warm start: the limit stays at
      // the initial 20 while its calls seed the no-load latency (no drain
      // to the minimum first), then slow start goes on from there.
      const first = await round(limiter, 10);
      assert.equal(first, 20, `${algorithm} serves at initialLimit from the first call`);
      const steady = await until(limiter, 10, (limit) => limit >= 16, 40);
      assert.ok(steady.at(-1) >= 16, `${algorithm} slow-starts at the no-load latency: ${steady}`);
      const base = steady.at(-1);
      const slow = await until(limiter, 60, (limit) => limit < base / 2, 20);
      assert.ok(slow.at(-1) < base / 2, `${algorithm} falls when latency is 6x: ${slow} (from ${base})`);
      assert.ok(slow.every((limit) => limit >= 2), "never below minLimit");
      const recovered = await until(limiter, 10, (limit) => limit > slow.at(-1) + 2, 40);
      assert.ok(recovered.at(-1) > slow.at(-1), `${algorithm} rises again: ${recovered}`);
    });
  }

  test("gradient2: a rejected call is sampled from admission to its settlement", async () => {
    // The same latency rise as above, with every call a plain (non-drop) error.
    const limiter = new Limiter({ adaptive: { algorithm: "gradient2", initialLimit: 20, minLimit: 2 } });
    const plain = () => new Error("not an overload");
    const steady = await until(limiter, 10, (limit) => limit >= 16, 40, plain);
    const slow = await until(limiter, 60, (limit) => limit < steady.at(-1) / 2, 20, plain);
    assert.ok(slow.at(-1) < steady.at(-1) / 2, `${steady} then ${slow}`);
  });

  test("instant 503s never move the no-load latency: the limit comes back after them", async () => {
    const limiter = new Limiter({ adaptive: { algorithm: "gradient2", initialLimit: 8, minLimit: 1, maxLimit: 40 } });
    const steady = await until(limiter, 10, (limit) => limit >= 16, 40);
    const base = steady.at(-1);
    // A burst of instant 503s: one backoff per window, down to the minimum.
    const shed = await until(limiter, 0, (limit) => limit === 1, 60, () => overload(503));
    assert.equal(shed.at(-1), 1, `${shed}`);
    // Normal answers again: slow start back towards the level before.
    const back = await until(limiter, 10, (limit) => limit >= base / 2, 40);
    assert.ok(back.at(-1) >= base / 2, `back to ${back.at(-1)} of ${base}: ${back}`);
  });
});

describe("fetch", () => {
  let origin;
  before(async () => {
    origin = await startOrigin();
  });
  after(() => origin.close());

  async function answered(limiter, status) {
    const pending = limiter.fetch(`${origin.url}/x`);
    const { res } = await origin.next();
    clock.now += 5;
    res.writeHead(status).end();
    const response = await pending;
    await response.arrayBuffer();
    clock.now += 1;
    return limiter.stats().limit;
  }

  test("a 503 or 429 answer is a drop, a 200 or 500 is not", async () => {
    const limiter = new Limiter({ adaptive: { algorithm: "aimd", initialLimit: 10 } });
    assert.equal(await answered(limiter, 503), 9);
    assert.equal(await answered(limiter, 429), 8);
    assert.equal(await answered(limiter, 200), 8);
    assert.equal(await answered(limiter, 500), 8);
  });

  test("a network failure is a drop; a fetch aborted by the caller is not sampled", async () => {
    const limiter = new Limiter({ adaptive: { algorithm: "aimd", initialLimit: 10 } });
    const controller = new AbortController();
    const pending = settle(limiter.fetch(`${origin.url}/abort`, { signal: controller.signal }));
    await origin.next("/abort");
    controller.abort();
    assert.equal((await pending).ok, false);
    assert.equal(limiter.stats().limit, 10, "the caller's abort is no drop");
    const refused = await settle(limiter.fetch("http://127.0.0.1:9/closed-port"));
    assert.ok(refused.error instanceof TypeError, String(refused.error));
    assert.equal(limiter.stats().limit, 9, "a connection failure is a drop");
    assert.equal(limiter.stats().inFlight, 0);
  });

  /**
   * One round of fetches, as many as the limit admits: headers at once, then
   * `bodyMs` of clock time before each body ends (read to its end). Returns
   * the limit after the round.
   */
  async function streamedRound(limiter, bodyMs) {
    const count = limiter.stats().limit;
    const pending = Array.from({ length: count }, (_, i) => limiter.fetch(`${origin.url}/stream-${i}`));
    const answers = [];
    for (let i = 0; i < count; i++) {
      const { res } = await origin.next();
      res.writeHead(200);
      res.write("first chunk");
      answers.push(res);
    }
    const responses = await Promise.all(pending);
    clock.now += bodyMs;
    for (const res of answers) res.end("last chunk");
    await Promise.all(responses.map((response) => response.text()));
    assert.equal(limiter.stats().inFlight, 0);
    clock.now += 1;
    return limiter.stats().limit;
  }

  test("a served fetch is timed to the end of its body, the span it holds its slot", async () => {
    // gradient2 judges by latency: bodies of 10 ms, then of 60 ms (headers
    // at once both times). Timed to the headers, every call took 0 ms and
    // the limit never fell.
    const limiter = new Limiter({ adaptive: { algorithm: "gradient2", initialLimit: 8, minLimit: 1, maxLimit: 40 } });
    let limit = 0;
    for (let i = 0; i < 40 && limit < 16; i++) limit = await streamedRound(limiter, 10);
    assert.ok(limit >= 16, `grows while the bodies are short: ${limit}`);
    const base = limit;
    for (let i = 0; i < 20 && limit >= base / 2; i++) limit = await streamedRound(limiter, 60);
    assert.ok(limit < base / 2, `falls when the bodies take 6x: ${limit} from ${base}`);
  });

  test("an overload answer is sampled at its headers (a drop), with its body still open", async () => {
    const limiter = new Limiter({ adaptive: { algorithm: "aimd", initialLimit: 4 } });
    const pending = limiter.fetch(`${origin.url}/held`);
    const { res } = await origin.next("/held");
    res.writeHead(503);
    res.write("partial");
    const response = await pending;
    assert.equal(limiter.stats().limit, 3, "sampled (a drop) with the body still open");
    assert.equal(limiter.stats().heldBodies, 1);
    res.end();
    await response.text();
    assert.equal(limiter.stats().inFlight, 0);
  });
});

test("a deadline that passes while fn runs is ignored: the caller's deadline, not the origin's answer", async () => {
  performance.now = realNow; // the deadline's timer runs on the host clock
  const limiter = new Limiter({ adaptive: { algorithm: "aimd", initialLimit: 10 } });
  const work = deferred();
  const call = await settle(limiter.run(() => work.promise, { deadlineMs: 5 }));
  assert.ok(call.error instanceof DeadlineError);
  assert.equal(limiter.stats().limit, 10, "no backoff at the deadline");
  assert.equal(limiter.stats().inFlight, 1, "the slot is held until the work settles");
  work.resolve("late");
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(limiter.stats().inFlight, 0);
  assert.equal(limiter.stats().limit, 10, "the abandoned work is not sampled either");
});
