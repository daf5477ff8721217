// Criticality, per-key fair share and rate limits in the gateway (DESIGN,
// "Criticality, fairness and rate limits"), in real workerd against real
// origins: a route's criticality decides who is shed first, the
// edgeshed-criticality header may only lower it, a full queue displaces its
// least critical waiter (503 "displaced"), a key over its rate gets 429 with
// Retry-After and RateLimit headers, and a noisy key cannot starve another.
// Every wait is on an event (a gate, an arrival, the stats), never a sleep.
import { after as afterAll, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { after, answer, gate, startOrigin } from "./support/origin.mjs";
import { idle, startWorker } from "./support/worker.mjs";

const tenant = (name, extra = {}) => ({ headers: { "x-tenant": name, ...extra } });

describe("criticality: shed order, the header, displacement", () => {
  let shared, single, worker;
  before(async () => {
    shared = await startOrigin("shared");
    single = await startOrigin("single");
    worker = await startWorker({
      statsPublic: true,
      retryAfterSeconds: 3,
      origins: {
        // limit 4 with the default reserve: sheddable 2, default 3, critical 4
        shared: { url: shared.url, maxInFlight: 4, maxQueue: 0 },
        single: { url: single.url, maxInFlight: 1, maxQueue: 1, queueTimeoutMs: 10000 },
      },
      routes: [
        { prefix: "/batch/", origin: "shared", criticality: "sheddable" },
        { prefix: "/plain/", origin: "shared" },
        { prefix: "/checkout/", origin: "shared", criticality: "critical" },
        { prefix: "/q-batch/", origin: "single", criticality: "sheddable" },
        { prefix: "/q-checkout/", origin: "single", criticality: "critical" },
      ],
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await Promise.all([shared, single].map((o) => o?.close()));
  });

  /**
   * One critical request to its end: a sight of a critical request, so the
   * reserve is kept (not lent to the lower criticalities) for the next
   * 4 x maxInFlight requests that find no slot free (docs/gateway.md).
   */
  async function seeCritical() {
    shared.behave(answer({ ok: true }));
    const seen = await worker.get("/checkout/seen");
    assert.equal(seen.status, 200, seen.text);
  }

  test("an overloaded origin refuses sheddable requests while critical (and default) ones still get in", async () => {
    await seeCritical();
    const held = gate();
    shared.behave(after(held, answer({ ok: true })));
    const batch = [worker.get("/batch/1"), worker.get("/batch/2")];
    await shared.arrivals(2);
    // Two sheddable calls hold what sheddable calls may: the third is refused...
    const refused = await worker.get("/batch/3");
    assert.equal(refused.status, 503, refused.text);
    assert.deepEqual(refused.json, { error: "overloaded", scope: "origin:shared", reason: "limit" });
    assert.equal(refused.headers.get("retry-after"), "3");
    // ...while the slots kept for the others are still free.
    const plain = worker.get("/plain/1");
    const checkout = worker.get("/checkout/1");
    await shared.arrivals(4);
    held.open();
    for (const r of await Promise.all([...batch, plain, checkout])) assert.equal(r.status, 200, r.text);
    const stats = await worker.until(idle, { what: "idle" });
    const classes = stats.origins.shared.byCriticality;
    assert.deepEqual(
      [classes.sheddable.admitted, classes.sheddable.shed, classes.default.admitted, classes.critical.admitted],
      [2, 1, 1, 2],
    );
  });

  test("edgeshed-criticality lowers a route's criticality but never raises it", async () => {
    await seeCritical();
    const held = gate();
    shared.behave(after(held, answer({ ok: true })));
    const holders = [worker.get("/batch/a"), worker.get("/batch/b"), worker.get("/plain/c")];
    await worker.until((s) => s.origins.shared.inFlight === 3, { what: "3 in flight" });
    // 3 in flight: a default request may not take the 4th slot, kept for critical ones —
    // and asking for "critical" does not make it one.
    const raised = await worker.get("/plain/d", { headers: { "edgeshed-criticality": "critical" } });
    assert.equal(raised.status, 503, `the header raised a default request: ${raised.text}`);
    // A critical route lowered to sheddable (any case, spaces) is refused too.
    const lowered = await worker.get("/checkout/e", { headers: { "edgeshed-criticality": " Sheddable " } });
    assert.equal(lowered.status, 503, `the header did not lower a critical request: ${lowered.text}`);
    // An unknown value is ignored: the critical route keeps its criticality.
    const unknown = worker.get("/checkout/f", { headers: { "edgeshed-criticality": "urgent" } });
    await worker.until((s) => s.origins.shared.inFlight === 4, { what: "the critical request admitted" });
    held.open();
    for (const r of await Promise.all([...holders, unknown])) assert.equal(r.status, 200, r.text);
    await worker.until(idle, { what: "idle" });
  });

  test("a full queue displaces its sheddable waiter for a critical arrival: 503 reason displaced", async () => {
    const held = gate();
    single.behave(after(held, answer({ ok: true })));
    const running = worker.get("/q-checkout/run");
    await single.arrivals(1);
    const waiter = worker.get("/q-batch/wait");
    await worker.until((s) => s.origins.single.queued === 1, { what: "the sheddable request queued" });
    const critical = worker.get("/q-checkout/next");
    const displaced = await waiter;
    assert.equal(displaced.status, 503, displaced.text);
    assert.deepEqual(displaced.json, { error: "overloaded", scope: "origin:single", reason: "displaced" });
    assert.equal(displaced.headers.get("retry-after"), "3");
    held.open();
    assert.equal((await running).status, 200);
    assert.equal((await critical).status, 200);
    const stats = await worker.until(idle, { what: "idle" });
    assert.equal(stats.origins.single.displaced, 1);
    assert.equal(stats.origins.single.byCriticality.sheddable.displaced, 1);
    assert.deepEqual(single.requests.map((r) => r.url), ["/run", "/next"], "the displaced request never reached the origin");
  });
});

describe("rate limits and fair share", () => {
  let fast, fair, worker;
  before(async () => {
    fast = await startOrigin("fast");
    fair = await startOrigin("fair");
    fast.behave(answer({ ok: true }));
    worker = await startWorker(
      {
        statsPublic: true,
        origins: {
          fast: { url: fast.url },
          fair: { url: fair.url, maxInFlight: 2, maxQueue: 4, queueTimeoutMs: 10000 },
        },
        routes: [
          { prefix: "/rated/", origin: "fast", rateLimit: { key: "header:x-tenant", perMinute: 1, burst: 2 } },
          { prefix: "/flood/", origin: "fast", rateLimit: { key: "header:x-client", perMinute: 1, burst: 2, maxKeys: 10 } },
          { prefix: "/bound/", origin: "fast", rateLimit: { binding: "LIMITER", key: "header:x-tenant", periodSeconds: 10 } },
          { prefix: "/fair/", origin: "fair", fairness: { key: "header:x-tenant" } },
        ],
      },
      { ratelimits: { LIMITER: { simple: { limit: 1, period: 10 } } } },
    );
  });
  afterAll(async () => {
    await worker?.dispose();
    await Promise.all([fast, fair].map((o) => o?.close()));
  });

  test("a key over its rate gets 429 with Retry-After and RateLimit headers; other keys keep theirs", async () => {
    const first = await worker.get("/rated/x", tenant("a"));
    assert.equal(first.status, 200, first.text);
    assert.equal(first.headers.get("ratelimit-policy"), '"edgeshed";q=2;w=120');
    assert.match(first.headers.get("ratelimit"), /^"edgeshed";r=1;t=(59|60)$/);
    const second = await worker.get("/rated/x", tenant("a"));
    assert.equal(second.status, 200);
    assert.match(second.headers.get("ratelimit"), /^"edgeshed";r=0;t=(119|120)$/);
    const third = await worker.get("/rated/x", tenant("a"));
    assert.equal(third.status, 429, third.text);
    assert.deepEqual(third.json, { error: "rate_limited", scope: "route:/rated/", reason: "rate" });
    assert.match(third.headers.get("retry-after"), /^(59|60)$/, "Retry-After is the GCRA's earliest allowed time");
    assert.equal(third.headers.get("ratelimit-policy"), '"edgeshed";q=2;w=120');
    assert.match(third.headers.get("ratelimit"), /^"edgeshed";r=0;t=(59|60)$/);
    assert.equal(fast.requests.length, 2, "a refused request never reaches the origin");
    const other = await worker.get("/rated/x", tenant("b"));
    assert.equal(other.status, 200, "another key has its own allowance");
    const stats = await worker.stats();
    assert.deepEqual(stats.routes["/rated/"], { rateLimited: 1, rateOverflow: 0 });
    assert.equal(stats.global.admitted, 3, "the refused request took no global slot");
  });

  test("invented header values that fill the key table do not lock out a new client, nor touch a tracked one", async () => {
    const client = (name) => ({ headers: { "x-client": name } });
    const regular = await worker.get("/flood/r", client("regular"));
    assert.equal(regular.status, 200, regular.text);
    // Nine invented values fill the table (maxKeys 10), each still limited for a minute.
    for (let i = 0; i < 9; i++) assert.equal((await worker.get("/flood/s", client(`invented-${i}`))).status, 200);
    // A new client's first request: let through on the one overflow allowance the untracked keys share.
    const newcomer = await worker.get("/flood/n", client("newcomer"));
    assert.equal(newcomer.status, 200, `the new client was locked out: ${newcomer.text}`);
    // The flood goes on and uses up that shared allowance (burst 2): the degraded mode's limit.
    assert.equal((await worker.get("/flood/s", client("invented-9"))).status, 200);
    const flooded = await worker.get("/flood/s", client("invented-10"));
    assert.equal(flooded.status, 429, flooded.text);
    assert.deepEqual(flooded.json, { error: "rate_limited", scope: "route:/flood/", reason: "rate" });
    assert.match(flooded.headers.get("retry-after"), /^(59|60)$/, "the overflow allowance's next turn");
    // The tracked client keeps its own allowance all along.
    assert.equal((await worker.get("/flood/r", client("regular"))).status, 200, "the tracked key's second call");
    const stats = await worker.stats();
    assert.deepEqual(stats.routes["/flood/"], { rateLimited: 1, rateOverflow: 3 });
    const metrics = await worker.get("/__edgeshed/metrics");
    assert.match(metrics.text, /^edgeshed_rate_overflow_total\{route="\/flood\/"\} 3$/m);
  });

  test("a Rate Limiting binding refuses with 429 and the binding's period as Retry-After", async () => {
    const first = await worker.get("/bound/y", tenant("c"));
    assert.equal(first.status, 200, first.text);
    assert.equal(first.headers.get("ratelimit"), null, "a binding reports no RateLimit header");
    const second = await worker.get("/bound/y", tenant("c"));
    assert.equal(second.status, 429, second.text);
    assert.deepEqual(second.json, { error: "rate_limited", scope: "route:/bound/", reason: "rate" });
    assert.equal(second.headers.get("retry-after"), "10");
    assert.equal((await worker.get("/bound/y", tenant("d"))).status, 200, "per key");
    assert.deepEqual((await worker.stats()).routes["/bound/"], { rateLimited: 1, rateOverflow: 0 });
  });

  test("a noisy key cannot starve another: over its fair share it gets 429, and the quiet key takes the next free slot", async () => {
    // Each call is held at the origin until the test releases it by path.
    const gates = new Map();
    const gateOf = (url) => gates.get(url) ?? gates.set(url, gate()).get(url);
    fair.behave(async (req, res, seen) => after(gateOf(req.url), answer({ ok: true }))(req, res, seen));
    const noisy = [worker.get("/fair/a1", tenant("noisy")), worker.get("/fair/a2", tenant("noisy"))];
    await fair.arrivals(2);
    // Alone, the noisy key may queue behind its own calls (it holds its share, not more)...
    noisy.push(worker.get("/fair/a3", tenant("noisy")), worker.get("/fair/a4", tenant("noisy")));
    await worker.until((s) => s.origins.fair.queued === 2, { what: "two noisy waiters" });
    const quiet = worker.get("/fair/b1", tenant("quiet"));
    await worker.until((s) => s.origins.fair.queued === 3, { what: "the quiet waiter" });
    // ...but once another key waits, it holds more than its share (2 of 2 slots, 2 keys).
    const over = await worker.get("/fair/a5", tenant("noisy"));
    assert.equal(over.status, 429, over.text);
    assert.deepEqual(over.json, { error: "rate_limited", scope: "route:/fair/", reason: "fair_share" });
    assert.equal(over.headers.get("retry-after"), "1", "no time is known: retryAfterSeconds");
    // The first slot to free goes to the quiet key, ahead of the noisy key's older waiters.
    gateOf("/a1").open();
    await fair.arrivals(3);
    assert.equal(fair.requests[2].url, "/b1", `served third: ${fair.requests.map((r) => r.url)}`);
    for (const url of ["/a2", "/a3", "/a4", "/b1"]) gateOf(url).open();
    for (const r of await Promise.all([...noisy, quiet])) assert.equal(r.status, 200, r.text);
    const stats = await worker.until(idle, { what: "idle" });
    assert.equal(stats.origins.fair.fairShareRefused, 1);
    assert.equal(stats.global.fairShareRefused, 0, "the global limit was never full");
  });

  test("a rate-limit binding missing from env is a configuration error naming the key", async () => {
    const broken = await startWorker({
      statsToken: "t",
      origins: { fast: { url: fast.url } },
      routes: [{ prefix: "/p/", origin: "fast", rateLimit: { binding: "NOPE" } }],
    });
    try {
      const r = await broken.get("/p/x");
      assert.equal(r.status, 500);
      assert.deepEqual(r.json, { error: "misconfigured" });
      // Found with env, after the configuration was read: its statsToken still opens the details.
      const details = await broken.get("/__edgeshed/stats", { headers: { authorization: "Bearer t" } });
      assert.match(details.json.message, /routes\[0\]\.rateLimit\.binding: env has no Rate Limiting binding "NOPE"/);
    } finally {
      await broken.dispose();
    }
  });
});

describe("reserves that waste nothing", () => {
  let solo, other, worker;
  before(async () => {
    solo = await startOrigin("solo");
    other = await startOrigin("other");
    worker = await startWorker({
      statsPublic: true,
      origins: {
        solo: { url: solo.url, maxInFlight: 3, maxQueue: 0 },
        other: { url: other.url, maxInFlight: 3, maxQueue: 0 },
      },
      // A criticality named on one route puts the default reserve on every limit.
      routes: [
        { prefix: "/solo/", origin: "solo" },
        { prefix: "/solo-checkout/", origin: "solo", criticality: "critical" },
        { prefix: "/other/", origin: "other", criticality: "critical" },
      ],
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await Promise.all([solo, other].map((o) => o?.close()));
  });

  test("stats and metrics show the reserve one route's criticality put on every limit, and each criticality's ceiling", async () => {
    const stats = await worker.stats();
    for (const scope of [stats.global, stats.origins.solo, stats.origins.other]) {
      assert.deepEqual(scope.reserve, { critical: 0.1, default: 0.2 }, JSON.stringify(scope));
    }
    // maxInFlight 3 under the default reserve: default requests may hold 2 (while it is kept).
    assert.deepEqual(stats.origins.solo.ceilings, { critical: 3, default: 2, sheddable: 2 });
    const metrics = (await worker.get("/__edgeshed/metrics")).text;
    for (const line of [
      'edgeshed_ceiling{scope="origin:solo",criticality="critical"} 3',
      'edgeshed_ceiling{scope="origin:solo",criticality="default"} 2',
      'edgeshed_reserve{scope="origin:solo",criticality="critical"} 0.1',
      'edgeshed_reserve{scope="origin:solo",criticality="default"} 0.2',
    ]) {
      assert.ok(metrics.split("\n").includes(line), `${line} in\n${metrics}`);
    }
  });

  test("an origin that only sees default requests admits its whole maxInFlight; a critical request ends the loan", async () => {
    const held = gate();
    solo.behave(after(held, answer({ ok: true })));
    const requests = [worker.get("/solo/1"), worker.get("/solo/2"), worker.get("/solo/3")];
    // Kept, the reserve would have admitted 2 (the third answered 503 at once).
    await worker.until((s) => s.origins.solo.inFlight === 3, { what: "all 3 default requests admitted" });
    const full = await worker.get("/solo/4");
    assert.deepEqual(full.json, { error: "overloaded", scope: "origin:solo", reason: "limit" });
    // Stats and metrics show the loan.
    const lent = async () => {
      const by = (await worker.stats()).origins.solo.byCriticality;
      const metrics = (await worker.get("/__edgeshed/metrics")).text;
      const gauge = metrics.split("\n").find((line) => line.startsWith('edgeshed_reserve_lent{scope="origin:solo",criticality="default"} '));
      return { critical: by.critical.lent, default: by.default.lent, sheddable: by.sheddable.lent, gauge: gauge?.split(" ").pop() };
    };
    assert.deepEqual(await lent(), { critical: false, default: true, sheddable: false, gauge: "1" });
    // A critical request finds the slots lent out: refused, and the loan ends.
    const critical = await worker.get("/solo-checkout/1");
    assert.equal(critical.status, 503, critical.text);
    assert.deepEqual(await lent(), { critical: false, default: false, sheddable: false, gauge: "0" }, "the loan ended");
    held.open();
    for (const r of await Promise.all(requests)) assert.equal(r.status, 200, r.text);
    await worker.until(idle, { what: "idle" });
    // Kept again: two default requests, and the third slot stays for a critical one.
    const again = gate();
    solo.behave(after(again, answer({ ok: true })));
    const two = [worker.get("/solo/5"), worker.get("/solo/6")];
    await solo.arrivals(5); // in total: 3 before, 2 now
    const third = await worker.get("/solo/7");
    assert.equal(third.status, 503, third.text);
    const checkout = worker.get("/solo-checkout/2");
    await worker.until((s) => s.origins.solo.inFlight === 3, { what: "the critical request in the kept slot" });
    again.open();
    for (const r of await Promise.all([...two, checkout])) assert.equal(r.status, 200, r.text);
    await worker.until(idle, { what: "idle" });
  });
});
