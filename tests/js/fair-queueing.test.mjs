// Fair queueing in the npm package (docs/js.md, "Fair queueing"), with real
// timers and wide margins: a noisy key with 40 closed-loop callers beside four
// quiet keys with one caller each cannot crowd the quiet ones out, with or
// without a key on the flood, and the noisy key still gets the rest of the
// capacity. Issue 30 measured 0 of 575 quiet calls served here before fair
// queueing (0 of 582 with a keyless flood).
import { test } from "node:test";
import assert from "node:assert/strict";
import { setImmediate as yieldToTimers, setTimeout as sleep } from "node:timers/promises";
import { Limiter } from "../../pkg/node.js";

const LIMIT = 4;
const CALL_MS = 10;
const THINK_MS = 20;
const RUN_MS = 1500;
const NOISY_CALLERS = 40;
const QUIET_KEYS = ["quiet-a", "quiet-b", "quiet-c", "quiet-d"];

/** The run's figures: per class served, refused (by reason), latencies; the slots' busy time. */
async function noisyBesideQuiet(noisyKey) {
  const limiter = new Limiter({ maxInFlight: LIMIT, maxQueue: 16, queueTimeoutMs: 200 });
  let busyMs = 0;
  const work = async () => {
    const start = performance.now();
    await sleep(CALL_MS);
    busyMs += performance.now() - start;
  };
  const started = performance.now();
  const end = started + RUN_MS;
  const figures = () => ({ served: 0, refused: {}, latencies: [] });
  const noisy = figures();
  const quiet = figures();
  const call = async (options, into) => {
    const start = performance.now();
    try {
      await limiter.run(work, options);
      into.served += 1;
      into.latencies.push(performance.now() - start);
      return true;
    } catch (error) {
      const why = `${error.status} ${error.reason}`;
      into.refused[why] = (into.refused[why] ?? 0) + 1;
      return false;
    }
  };
  // Closed loop: the next call as soon as the last one ends; after a refusal,
  // once the timers had their turn (a refusal settles at once, and a loop of
  // microtasks would starve every timer, the work's included).
  const noisyCaller = async () => {
    while (performance.now() < end) {
      if (!(await call(noisyKey === undefined ? undefined : { key: noisyKey }, noisy))) await yieldToTimers();
    }
  };
  const quietCaller = async (key) => {
    while (performance.now() < end) {
      await call({ key }, quiet);
      await sleep(THINK_MS);
    }
  };
  await Promise.all([
    ...Array.from({ length: NOISY_CALLERS }, noisyCaller),
    ...QUIET_KEYS.map(quietCaller),
  ]);
  const elapsed = performance.now() - started;
  const refusedOf = (c) => Object.values(c.refused).reduce((a, b) => a + b, 0);
  const p99 = (values) => [...values].sort((a, b) => a - b)[Math.max(0, Math.ceil(values.length * 0.99) - 1)];
  return {
    quietSent: quiet.served + refusedOf(quiet),
    quietServed: quiet.served,
    quietSuccess: quiet.served / Math.max(1, quiet.served + refusedOf(quiet)),
    quietP99: p99(quiet.latencies) ?? Infinity,
    quietRefused: quiet.refused,
    noisyServed: noisy.served,
    noisyRefused: noisy.refused,
    busy: busyMs / (LIMIT * elapsed),
    top: limiter.stats().topRefusedKeys,
  };
}

function check(t, r, noisyShown) {
  t.diagnostic(JSON.stringify({ ...r, quietP99: Math.round(r.quietP99), busy: Number(r.busy.toFixed(3)) }));
  assert.ok(r.quietSent >= 100, `the quiet keys called often enough: ${r.quietSent}`);
  assert.ok(r.quietSuccess >= 0.95, `quiet success ${r.quietServed}/${r.quietSent} (${JSON.stringify(r.quietRefused)}) >= 0.95`);
  // A quiet call waits for about one call's time (a slot frees) and runs one: measured 26
  // to 47 ms on a shared 2-core machine; the bound leaves room for its timers.
  assert.ok(r.quietP99 <= 8 * CALL_MS, `quiet p99 ${r.quietP99.toFixed(1)} ms <= ${8 * CALL_MS} ms`);
  // Work-conserving: the slots stay busy, the noisy key taking what the quiet ones leave.
  assert.ok(r.busy >= 0.75, `slots busy ${r.busy.toFixed(3)} of the time`);
  assert.ok(r.noisyServed >= r.quietServed, `noisy served ${r.noisyServed} >= quiet served ${r.quietServed}`);
  assert.ok(r.noisyServed >= 0.5 * (r.noisyServed + r.quietServed), "the noisy key gets the rest of the capacity");
  // Who is being limited: the noisy key (by its first bytes), or the keyless key.
  assert.equal(r.top[0]?.key, noisyShown, JSON.stringify(r.top));
}

test("a noisy key with 40 callers does not crowd out four quiet keys (real timers)", async (t) => {
  check(t, await noisyBesideQuiet("noisy-tenant-with-a-long-api-key"), "noisy-tenant-wit");
});

test("a keyless flood does not crowd out four quiet keys: the calls without a key are one key", async (t) => {
  check(t, await noisyBesideQuiet(undefined), null);
});

test("fairWeight: a key of weight 3 holds three slots to a weight-1 key's one while both have waiters", async () => {
  const limiter = new Limiter({ maxInFlight: LIMIT, maxQueue: 64, queueTimeoutMs: 60_000 });
  const running = { gold: 0, basic: 0 };
  const served = { gold: 0, basic: 0 };
  const holding = []; // the running calls' releases, oldest first
  const call = (key, options) =>
    limiter.run(async () => {
      running[key] += 1;
      served[key] += 1;
      await new Promise((resolve) => holding.push(resolve));
      running[key] -= 1;
    }, { key, ...options });
  const calls = [];
  for (let i = 0; i < 24; i++) calls.push(call("gold", { fairWeight: 3 }), call("basic"));
  const seen = [];
  // Each step ends the oldest running call; its slot goes to the key holding the least for its weight.
  for (let step = 0; step < 28; step++) {
    holding.shift()();
    await sleep(5);
    if (step >= 8) seen.push(`${running.gold}:${running.basic}`);
  }
  assert.deepEqual(new Set(seen), new Set(["3:1"]), `slots held gold:basic after each step: ${seen.join(" ")}`);
  while (holding.length > 0 || limiter.stats().inFlight > 0) {
    holding.shift()?.();
    await sleep(1);
  }
  await Promise.all(calls);
  assert.deepEqual(served, { gold: 24, basic: 24 });
});
