// Keys are a keyed hash of the whole value (docs/js.md, "Keys are a keyed hash
// of the whole value"): values that share a long prefix never merge, and a
// key's memory does not grow with its length.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Limiter, RateLimitedError } from "../../pkg/node.js";
import { initSync } from "../../pkg/edgeshed.js";
import { settle } from "./support/helpers.mjs";

/** A JWT-like bearer token: a long header and payload shared by every user, then the user. */
const jwt = (user) => `Bearer eyJhbGciOiJIUzI1NiJ9.${"eyJpc3MiOiJleGFtcGxlIn0".repeat(13)}.${user}`;

test("two JWT-like keys that share their first 300 bytes are limited separately", async () => {
  const [alice, bob] = [jwt("alice"), jwt("bob")];
  assert.equal(alice.slice(0, 300), bob.slice(0, 300));
  const limiter = new Limiter({ maxInFlight: 10, rate: { perSecond: 1, burst: 1 } });
  assert.equal(await limiter.run(() => "alice 1", { key: alice }), "alice 1");
  const again = await settle(limiter.run(() => "alice 2", { key: alice }));
  assert.ok(again.error instanceof RateLimitedError && again.error.reason === "rate", String(again.error));
  // bob's first call has an allowance of its own.
  assert.equal(await limiter.run(() => "bob 1", { key: bob }), "bob 1");
  // And the stats show neither whole token: its first 16 bytes at most.
  const shown = limiter.stats().topRefusedKeys;
  assert.deepEqual(shown, [{ key: alice.slice(0, 16), refused: 1, overcount: 0 }]);
});

test("fair queueing tells the two keys apart too: bob's waiter goes before alice's", async () => {
  const [alice, bob] = [jwt("alice"), jwt("bob")];
  const limiter = new Limiter({ maxInFlight: 2, maxQueue: 4, queueTimeoutMs: 60_000 });
  const release = [];
  const hold = () => new Promise((resolve) => release.push(resolve));
  const order = [];
  const held = [limiter.run(hold, { key: alice }), limiter.run(hold, { key: alice })];
  const queued = [
    limiter.run(() => order.push("alice 3"), { key: alice }),
    limiter.run(() => order.push("bob 1"), { key: bob }),
  ];
  assert.equal(limiter.stats().queued, 2);
  release.shift()();
  await held[0];
  release.shift()();
  await Promise.all([held[1], ...queued]);
  // One key (a cut value) would be served in arrival order: alice 3 first.
  assert.deepEqual(order, ["bob 1", "alice 3"]);
});

test("a 16 KiB key costs the limiter the same memory as a short one", async (t) => {
  // The wasm instance's memory (it only grows): the rate limit keeps every
  // key below for a minute, so 1,000 keys of 16 KiB kept whole would need
  // 16 MiB more of it.
  const { memory } = initSync();
  const grows = async (keyOf) => {
    const limiter = new Limiter({ maxInFlight: 10, rate: { perMinute: 1, burst: 1, maxKeys: 2000 } });
    const before = memory.buffer.byteLength;
    for (let i = 0; i < 1000; i++) await limiter.run(() => i, { key: keyOf(i) });
    assert.equal(limiter.stats().rateOverflow, 0);
    const grown = memory.buffer.byteLength - before;
    limiter.free();
    return grown;
  };
  // The long keys first: the table's own first allocation is theirs.
  const long = await grows((i) => `${"k".repeat(16 * 1024 - 8)}${String(i).padStart(8, "0")}`);
  const short = await grows((i) => `k${i}`);
  t.diagnostic(`wasm memory grown by 1,000 tracked keys: short ${short} bytes, 16 KiB ${long} bytes`);
  assert.ok(long <= short + 1024 * 1024, `1,000 keys of 16 KiB grew the wasm memory by ${long} bytes, short keys by ${short}`);
});
