// maxQueueWait "auto" (docs/js.md): a call whose expected wait is longer
// than one service time is refused at arrival instead of waiting for its
// queueTimeoutMs. Real timers: the completion rate is measured on the
// host's clock, from calls that take ~10 ms; the burst itself is decided by
// events (nothing completes while it is judged).
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { Limiter, OverloadedError } from "../../pkg/node.js";
import { deferred, isSettled, settle } from "./support/helpers.mjs";

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Rounds of `width` concurrent ~10 ms calls: some of each round must wait, so the limiter measures its completion rate. */
async function warmUp(limiter, width) {
  for (let round = 0; round < 8; round++) {
    await Promise.allSettled(Array.from({ length: width }, () => limiter.run(() => pause(10))));
  }
}

/** A burst of `size` calls that hold their slot (or wait) until `gate` opens; returns how many settled before it opened. */
async function burst(limiter, size, gate) {
  const calls = Array.from({ length: size }, () => settle(limiter.run(() => gate.promise)));
  const settled = [];
  for (const call of calls) settled.push(await isSettled(call));
  return { calls, refusedAtOnce: settled.filter(Boolean).length };
}

describe('maxQueueWait "auto"', () => {
  const options = { maxInFlight: 2, maxQueue: 20, queueTimeoutMs: 60_000 };

  test("a burst's excess is refused at once; about one service time's worth of calls waits", async () => {
    const limiter = new Limiter({ ...options, maxQueueWait: "auto" });
    await warmUp(limiter, 4);
    const gate = deferred();
    const { calls, refusedAtOnce } = await burst(limiter, 12, gate);
    // 2 run, about 2 may wait (one service time at 2 in flight), the rest
    // is answered now, long before the 60 s queue timeout.
    assert.ok(refusedAtOnce >= 6 && refusedAtOnce <= 9, `refused at once: ${refusedAtOnce} of 12`);
    const refused = (await Promise.all(calls.map(ifSettled))).filter(Boolean);
    assert.equal(refused.length, refusedAtOnce);
    for (const outcome of refused) {
      assert.ok(outcome.error instanceof OverloadedError, String(outcome.error));
      assert.equal(outcome.error.reason, "queue_timeout");
      assert.equal(outcome.error.status, 503);
      assert.equal(
        outcome.error.message,
        'service overloaded: the expected wait for a slot of limit 2 (maxQueue 20) is longer than one service time (maxQueueWait "auto"): queue timeout',
      );
    }
    assert.equal(limiter.stats().queueTimeouts, refusedAtOnce);
    gate.resolve();
    const outcomes = await Promise.all(calls);
    assert.equal(outcomes.filter((o) => o.ok).length, 12 - refusedAtOnce, "every call that was not refused is served");
    assert.equal(limiter.stats().inFlight, 0);
    assert.equal(limiter.stats().queued, 0);
  });

  test('the default ("timeout") lets the whole burst wait', async () => {
    const limiter = new Limiter(options);
    await warmUp(limiter, 4);
    const gate = deferred();
    const { calls, refusedAtOnce } = await burst(limiter, 12, gate);
    assert.equal(refusedAtOnce, 0);
    gate.resolve();
    const outcomes = await Promise.all(calls);
    assert.equal(outcomes.filter((o) => o.ok).length, 12);
  });

  test("auto needs a queue, and a known value", () => {
    assert.throws(() => new Limiter({ maxInFlight: 1, maxQueueWait: "auto" }), (error) => {
      assert.equal(error.constructor, TypeError);
      assert.match(error.message, /^options\.maxQueueWait "auto" needs a queue/);
      return true;
    });
    assert.throws(() => new Limiter({ ...options, maxQueueWait: "fast" }), (error) => {
      assert.equal(error.constructor, TypeError);
      assert.match(error.message, /^options\.maxQueueWait must be "timeout" or "auto", got "fast"/);
      return true;
    });
  });
});

/** The outcome of a settled call (see `settle`), null while it is pending. */
async function ifSettled(call) {
  return (await isSettled(call)) ? call : null;
}
