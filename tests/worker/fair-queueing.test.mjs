// Fair queueing in the gateway (docs/gateway.md, "Fair queueing"), in real
// workerd against a real origin: the noisy tenant of benches/e2e/tenants.mjs
// in a quick form (quiet tenants keep their goodput while a noisy tenant
// floods, also when the flood leaves out the header), the contract's 429 for
// a key over its share while another waits, weights, the top refused keys,
// and keys that are the whole header value.
import { after as afterAll, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, answer, gate, startOrigin } from "./support/origin.mjs";
import { ROOT, idle, startWorker } from "./support/worker.mjs";

/**
 * docs/gateway.md's worked example (the JSON block after `<!-- example:
 * noisy-tenant -->`), its origin `api` pointed at `url` and its stats opened.
 */
function documentedConfig(url) {
  const doc = readFileSync(join(ROOT, "docs/gateway.md"), "utf8");
  const marker = "<!-- example: noisy-tenant -->";
  const at = doc.indexOf(marker);
  assert.ok(at >= 0, `docs/gateway.md has ${marker}`);
  const block = /```json\n([\s\S]*?)```/.exec(doc.slice(at));
  const config = JSON.parse(block[1]);
  config.origins.api.url = url;
  return { ...config, statsPublic: true };
}

const tenant = (name) => (name === undefined ? {} : { headers: { "x-tenant": name } });
const CALL_MS = 20;
const THINK_MS = 50;
const LOAD_MS = 2000;

/**
 * One request straight to workerd's socket (Node's fetch keeps connections
 * alive; Miniflare's dispatchFetch costs several times more per request,
 * which would make the test measure itself): { status, reason }.
 */
async function hit(worker, path, init) {
  const response = await fetch(new URL(path, worker.url), init);
  const text = await response.text();
  let reason;
  try {
    reason = JSON.parse(text).reason;
  } catch {
    reason = undefined;
  }
  return { status: response.status, reason };
}

/**
 * Closed-loop load on `path` for LOAD_MS: one caller per quiet tenant (with
 * THINK_MS of think time: together about half of what the origin serves
 * through this gateway here, some 100 requests a second) and `noisyCallers`
 * for the noisy tenant (named `noisy`, or no header when undefined), each
 * calling again at once, 10 ms after a refusal (so that the flood, still
 * several times the capacity, does not only measure the machine's CPU).
 */
async function load(worker, path, { quiet, noisy, noisyCallers }) {
  const end = Date.now() + LOAD_MS;
  const tally = () => ({ sent: 0, ok: 0, statuses: {} });
  const figures = { quiet: tally(), noisy: tally() };
  const call = async (name, into) => {
    into.sent += 1;
    const r = await hit(worker, path, tenant(name));
    const why = r.status === 200 ? 200 : `${r.status} ${r.reason}`;
    into.statuses[why] = (into.statuses[why] ?? 0) + 1;
    if (r.status === 200) into.ok += 1;
    return r.status === 200;
  };
  const quietCaller = async (name) => {
    while (Date.now() < end) {
      await call(name, figures.quiet);
      await sleep(THINK_MS);
    }
  };
  const noisyCaller = async () => {
    while (Date.now() < end) if (!(await call(noisy, figures.noisy))) await sleep(10);
  };
  await Promise.all([...quiet.map(quietCaller), ...Array.from({ length: noisyCallers }, noisyCaller)]);
  return figures;
}

describe("the noisy tenant (docs/gateway.md's worked example; quick form of benches/e2e/tenants.mjs)", () => {
  let origin, worker;
  const NOISY = `noisy-${"n".repeat(200)}`; // a long value: shown by its first 16 bytes only
  before(async () => {
    origin = await startOrigin("tenants");
    origin.behave(answer({ ok: true }, { delayMs: CALL_MS }));
    worker = await startWorker(documentedConfig(origin.url));
  });
  afterAll(async () => {
    await worker?.dispose();
    await origin?.close();
  });

  for (const [what, noisy, shown] of [
    ["a noisy tenant", NOISY, NOISY.slice(0, 16)],
    ["a flood without the header (the keyless key)", undefined, null],
  ]) {
    test(`quiet tenants keep their goodput beside ${what}`, async (t) => {
      const before = await worker.stats();
      const quiet = ["q0", "q1", "q2", "q3"];
      const figures = await load(worker, "/api/x", { quiet, noisy, noisyCallers: 16 });
      t.diagnostic(JSON.stringify(figures));
      const goodput = figures.quiet.ok / figures.quiet.sent;
      assert.ok(figures.quiet.sent >= 30, `the quiet tenants called ${figures.quiet.sent} times`);
      assert.ok(goodput >= 0.95, `quiet goodput ${goodput.toFixed(3)}: ${JSON.stringify(figures.quiet.statuses)}`);
      // The noisy tenant floods (at many times the capacity of 4 × 20 ms) and still gets the rest.
      assert.ok(figures.noisy.sent >= 2 * figures.noisy.ok, JSON.stringify(figures.noisy.statuses));
      const served = figures.noisy.ok + figures.quiet.ok;
      assert.ok(figures.noisy.ok >= 0.4 * served, `noisy served ${figures.noisy.ok} of ${served}`);
      const stats = await worker.until(idle, { what: "idle" });
      assert.ok(stats.origins.api.admitted - before.origins.api.admitted >= served);
      // Who is being limited: the noisy tenant, by its first 16 bytes, never
      // its whole value. The counts are the worker's since it started (this
      // worker ran the other flood too): the key refused most during this
      // flood is the one whose count grew most.
      const counted = (s) => new Map(s.origins.api.topRefusedKeys.map((k) => [k.key, k.refused]));
      const [earlier, now] = [counted(before), counted(stats)];
      const grown = [...now].map(([key, refused]) => [key, refused - (earlier.get(key) ?? 0)]);
      grown.sort((a, b) => b[1] - a[1]);
      assert.equal(grown[0][0], shown, JSON.stringify(stats.origins.api.topRefusedKeys));
      const text = (await worker.get("/__edgeshed/stats")).text + (await worker.get("/__edgeshed/metrics")).text;
      assert.ok(!text.includes(NOISY.slice(0, 40)), "the stats and metrics never show a long key whole");
      if (noisy !== undefined) {
        const metrics = (await worker.get("/__edgeshed/metrics")).text;
        assert.match(metrics, new RegExp(`^edgeshed_top_refused\\{scope="origin:api",rank="1",key="${shown}"\\} \\d+$`, "m"));
      }
    });
  }
});

describe("the fair share at the contract's edge", () => {
  let origin, worker;
  before(async () => {
    origin = await startOrigin("pair");
    worker = await startWorker({
      statsPublic: true,
      origins: { o: { url: origin.url, maxInFlight: 2, maxQueue: 4, queueTimeoutMs: 10000 } },
      // A rate limit far from binding: every answer of the route carries
      // its RateLimit-Policy and RateLimit headers, but for a 429 of the
      // fair share (docs/gateway.md, "Rate limits").
      routes: [{ prefix: "/f/", origin: "o", fairness: { key: "header:x-tenant" }, rateLimit: { key: "header:x-tenant", perSecond: 100, burst: 100 } }],
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await origin?.close();
  });

  // b with its own key, and b without the header: the keyless key is a key
  // (before it, a third request of a was queued and answered 200 then).
  for (const [what, b] of [["tenant b", "b"], ["a request without the header", undefined]]) {
    test(`tenant a holds both slots and ${what} waits: a third request of a is refused 429 fair_share`, async () => {
      const held = gate();
      origin.reset();
      origin.behave(after(held, answer({ ok: true })));
      const before = await worker.stats();
      const holding = [worker.get("/f/a1", tenant("a")), worker.get("/f/a2", tenant("a"))];
      await origin.arrivals(2);
      const waiting = worker.get("/f/b1", tenant(b));
      await worker.until((s) => s.origins.o.queued === 1, { what: "b waiting" });
      const third = await worker.get("/f/a3", tenant("a"));
      assert.equal(third.status, 429, `a's third request: ${third.status} ${third.text}`);
      assert.deepEqual(third.json, { error: "rate_limited", scope: "route:/f/", reason: "fair_share" });
      // Its headers agree: Retry-After (no time is known: retryAfterSeconds)
      // and the route's rate policy, but no RateLimit saying a's quota has
      // calls left now (the rate limit did not refuse it).
      assert.equal(third.headers.get("retry-after"), "1");
      assert.equal(third.headers.get("ratelimit-policy"), '"edgeshed";q=100;w=1');
      assert.equal(third.headers.get("ratelimit"), null, `a fair-share 429 with ratelimit: ${third.headers.get("ratelimit")}`);
      held.open();
      for (const r of await Promise.all([...holding, waiting])) {
        assert.equal(r.status, 200, r.text);
        assert.match(r.headers.get("ratelimit"), /^"edgeshed";r=9\d;t=1$/, "a 200 of the route keeps its RateLimit");
      }
      const stats = await worker.until(idle, { what: "idle" });
      assert.equal(stats.origins.o.fairShareRefused - before.origins.o.fairShareRefused, 1);
      assert.equal(stats.origins.o.topRefusedKeys[0].key, "a", JSON.stringify(stats.origins.o.topRefusedKeys));
    });
  }
});

describe("fairness.weights (docs/gateway.md's example: acme weighs 3)", () => {
  let origin, worker;
  before(async () => {
    origin = await startOrigin("weights");
    origin.behave(answer({ ok: true }, { delayMs: CALL_MS }));
    worker = await startWorker(documentedConfig(origin.url));
  });
  afterAll(async () => {
    await worker?.dispose();
    await origin?.close();
  });

  test("a tenant of weight 3 gets about three times the share of a tenant of weight 1", async (t) => {
    // acme and globex both flood; globex is not named, so it weighs 1.
    const served = { acme: 0, globex: 0 };
    const end = Date.now() + LOAD_MS;
    const caller = async (name) => {
      while (Date.now() < end) {
        const r = await hit(worker, "/api/x", tenant(name));
        if (r.status === 200) served[name] += 1;
        else await sleep(10);
      }
    };
    // Enough callers that both tenants always have requests waiting (a
    // weight decides only between keys that both wait).
    await Promise.all(Array.from({ length: 24 }, (_, i) => caller(i % 2 === 0 ? "acme" : "globex")));
    const ratio = served.acme / Math.max(1, served.globex);
    t.diagnostic(`served ${JSON.stringify(served)}, ratio ${ratio.toFixed(2)}`);
    assert.ok(served.globex >= 10, `the weight-1 tenant is served too: ${served.globex}`);
    assert.ok(ratio >= 2.2 && ratio <= 4, `acme:globex ${ratio.toFixed(2)}, about 3`);
  });
});

describe("keys are the whole header value", () => {
  let origin, worker;
  before(async () => {
    origin = await startOrigin("keys");
    origin.behave(answer({ ok: true }));
    worker = await startWorker({
      statsPublic: true,
      origins: { o: { url: origin.url } },
      // A fan-out route: it sends the origin no client header (a 16 KiB one
      // would exceed the Node origin's own header limit).
      routes: [{ path: "/r", fanout: [{ origin: "o", path: "/x" }], rateLimit: { key: "header:authorization", perSecond: 1, burst: 1 } }],
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await origin?.close();
  });

  const bearer = (user, size = 300) => `Bearer ${"e".repeat(size)}.${user}`;
  for (const size of [300, 16 * 1024]) {
    test(`two bearer tokens that share their first ${size} bytes have a rate each`, async () => {
      const [alice, bob] = [bearer(`alice-${size}`, size), bearer(`bob-${size}`, size)];
      const get = (token) => worker.get("/r", { headers: { authorization: token } });
      assert.equal((await get(alice)).status, 200);
      const again = await get(alice);
      assert.equal(again.status, 429, again.text);
      assert.equal(again.json.reason, "rate");
      const first = await get(bob);
      assert.equal(first.status, 200, `bob's first request: ${first.status} ${first.text}`);
    });
  }
});
