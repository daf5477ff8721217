// The rate limit's key table when strangers fill it (docs/js.md, "Rate limits"): a
// full table degrades to one overflow allowance that untracked keys share, so a new
// client is not locked out, and a key already tracked keeps its own allowance.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Limiter, RateLimitedError } from "../../pkg/node.js";
import { settle } from "./support/helpers.mjs";

test("after ten strangers fill a table of ten, a new client's first call is admitted on the overflow allowance", async () => {
  const limiter = new Limiter({ maxInFlight: 100, rate: { perMinute: 1, burst: 1, maxKeys: 10 } });
  for (let i = 0; i < 10; i++) assert.equal(await limiter.run(() => i, { key: `stranger-${i}` }), i);

  const first = await settle(limiter.run(() => "welcome", { key: "new-client" }));
  assert.ok(first.ok, `the new client was refused: ${first.error}`);
  assert.equal(first.value, "welcome");
  assert.deepEqual([limiter.stats().rateOverflow, limiter.stats().rateLimited], [1, 0]);

  // A tracked stranger is held to its own allowance, untouched by the overflow.
  const again = await settle(limiter.run(() => 0, { key: "stranger-0" }));
  assert.ok(again.error instanceof RateLimitedError, String(again.error));
  assert.ok(again.error.retryAfterMs > 59_000 && again.error.retryAfterMs <= 60_000, String(again.error.retryAfterMs));
  // The limit of the degraded mode: one more stranger shares the overflow allowance, now used up.
  const flood = await settle(limiter.run(() => 11, { key: "stranger-11" }));
  assert.ok(flood.error instanceof RateLimitedError, String(flood.error));
  assert.equal(flood.error.reason, "rate");
  assert.ok(flood.error.retryAfterMs > 59_000 && flood.error.retryAfterMs <= 60_000, String(flood.error.retryAfterMs));
  const s = limiter.stats();
  assert.deepEqual([s.rateOverflow, s.rateLimited, s.admitted], [2, 2, 11]);
});
