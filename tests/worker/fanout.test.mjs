// Fan-out routes against real origins: results, degradation, and the status
// mapping of the contract (503 overloaded, 504 deadline/timeout, 502).
import { after as afterAll, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { after, answer, closedPort, gate, hang, reset, startOrigin } from "./support/origin.mjs";
import { idle, serverTiming, startWorker } from "./support/worker.mjs";

const ACCEPT = { accept: "application/json" };

function assertTimingNames(headers, names) {
  const timing = serverTiming(headers.get("server-timing"));
  for (const name of names) {
    assert.ok(timing.has(name), `Server-Timing has ${name}: ${headers.get("server-timing")}`);
    assert.ok(Number.isFinite(timing.get(name).dur), `${name} has a numeric dur`);
  }
  return timing;
}

describe("fan-out: results and degradation", () => {
  let users, recs, ads, worker;
  before(async () => {
    users = await startOrigin("users");
    recs = await startOrigin("recs");
    ads = await startOrigin("ads");
    worker = await startWorker({
      statsPublic: true, // the test reads /__edgeshed/*
      retryAfterSeconds: 2,
      origins: {
        users: { url: users.url, timeoutMs: 5000 },
        recs: { url: recs.url, maxInFlight: 1, maxQueue: 0 },
        ads: { url: ads.url, timeoutMs: 100 },
      },
      routes: [
        {
          path: "/both",
          fanout: [
            { origin: "users", path: "/u" },
            { origin: "recs", path: "/r?n=1", required: false },
          ],
        },
        {
          path: "/dl",
          deadlineMs: 150,
          fanout: [
            { origin: "users", path: "/u" },
            { origin: "recs", path: "/r", required: false },
          ],
        },
        {
          path: "/three",
          fanout: [
            { origin: "users", path: "/u", required: true },
            { origin: "recs", path: "/r", required: false },
            { origin: "ads", path: "/a", required: false },
          ],
        },
      ],
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await Promise.all([users, recs, ads].map((o) => o?.close()));
  });

  test("all answer: 200, results keyed by origin name (JSON parsed, text kept), degraded []", async () => {
    users.reset();
    recs.reset();
    users.behave(answer({ id: 1, name: "Ada" }));
    recs.behave(answer("not json at all", { contentType: "text/plain" }));
    const r = await worker.get("/both", {
      headers: { ...ACCEPT, "x-secret": "no", authorization: "Bearer client", cookie: "a=b" },
    });
    assert.equal(r.status, 200, r.text);
    assert.match(r.headers.get("content-type"), /^application\/json/);
    assert.deepEqual(r.json, { results: { users: { id: 1, name: "Ada" }, recs: "not json at all" }, degraded: [] });
    assert.equal(r.headers.get("x-edgeshed-degraded"), null);
    const timing = assertTimingNames(r.headers, ["admission", "users", "recs"]);
    assert.equal(timing.size >= 3, true);

    // Fan-out calls are GETs to url + path, carrying only `accept` of the client's headers.
    assert.equal(users.requests.length, 1);
    assert.equal(users.requests[0].method, "GET");
    assert.equal(users.requests[0].url, "/u");
    assert.equal(recs.requests[0].url, "/r?n=1");
    const seen = users.requests[0].headers;
    assert.equal(seen.accept, "application/json");
    for (const name of ["x-secret", "authorization", "cookie"]) {
      assert.equal(seen[name], undefined, `client header ${name} is not forwarded to a fan-out call`);
    }
  });

  test("JSON scalars and arrays are parsed; a JSON-looking text/plain body is parsed too", async () => {
    users.behave(answer([1, 2, { x: null }]));
    recs.behave(answer("42", { contentType: "text/plain" }));
    const r = await worker.get("/both");
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, { results: { users: [1, 2, { x: null }], recs: 42 }, degraded: [] });
  });

  test("optional origin failing (500): 200, named in degraded and x-edgeshed-degraded, no result", async () => {
    users.behave(answer({ id: 1 }));
    recs.behave(answer({ oops: true }, { status: 500 }));
    const r = await worker.get("/both");
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, { results: { users: { id: 1 } }, degraded: ["recs"] });
    assert.equal(r.headers.get("x-edgeshed-degraded"), "recs");
    assertTimingNames(r.headers, ["admission", "users", "recs"]);
  });

  test("optional origin shed (its limit full, maxQueue 0): 200 degraded, and the held call still completes", async () => {
    users.behave(answer({ id: 1 }));
    const held = gate();
    recs.reset();
    recs.behave(after(held, answer({ items: ["late"] })));
    const first = worker.get("/both");
    await recs.arrivals(1); // the first request holds recs' only permit
    await held.arrivals(1);
    const second = await worker.get("/both");
    assert.equal(second.status, 200, second.text);
    assert.deepEqual(second.json, { results: { users: { id: 1 } }, degraded: ["recs"] });
    assert.equal(second.headers.get("x-edgeshed-degraded"), "recs");
    assert.equal(recs.requests.length, 1, "the shed call never reached recs");
    held.open();
    const r = await first;
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, { results: { users: { id: 1 }, recs: { items: ["late"] } }, degraded: [] });
    const stats = await worker.until(idle, { what: "idle" });
    assert.ok(stats.origins.recs.shed >= 1, JSON.stringify(stats.origins.recs));
  });

  test("optional origins timing out (timeoutMs 100) and failing: both degraded, joined by ', ', answered at the timeout", async () => {
    users.behave(answer({ id: 1 }));
    recs.behave(answer("bad", { status: 503 }));
    ads.reset();
    ads.behave(hang());
    const start = Date.now();
    const r = await worker.get("/three");
    const took = Date.now() - start;
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, { results: { users: { id: 1 } }, degraded: ["recs", "ads"] });
    assert.equal(r.headers.get("x-edgeshed-degraded"), "recs, ads");
    assert.ok(took >= 90 && took < 1500, `answered at ads' timeout, took ${took} ms`);
    assertTimingNames(r.headers, ["admission", "users", "recs", "ads"]);
    await ads.aborts(1); // the timed-out call was aborted, not left running
    await worker.until(idle, { what: "idle" });
  });

  test("optional origin still running at the route's deadline: 200 at the deadline, degraded", async () => {
    users.behave(answer({ id: 1 }));
    recs.reset();
    recs.behave(hang());
    const start = Date.now();
    const r = await worker.get("/dl");
    const took = Date.now() - start;
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, { results: { users: { id: 1 } }, degraded: ["recs"] });
    assert.equal(r.headers.get("x-edgeshed-degraded"), "recs");
    assert.ok(took >= 140 && took < 1000, `answered at the 150 ms deadline, took ${took} ms`);
    await recs.aborts(1);
    await worker.until(idle, { what: "idle" });
  });

  test("optional origin resetting the connection: degraded", async () => {
    users.behave(answer({ id: 1 }));
    recs.behave(reset());
    ads.behave(answer({ ad: 1 }));
    const r = await worker.get("/three");
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, { results: { users: { id: 1 }, ads: { ad: 1 } }, degraded: ["recs"] });
    assert.equal(r.headers.get("x-edgeshed-degraded"), "recs");
  });
});

describe("fan-out: required origin failures", () => {
  let users, other, worker, downPort;
  before(async () => {
    users = await startOrigin("users");
    other = await startOrigin("other");
    downPort = await closedPort();
    worker = await startWorker({
      statsPublic: true, // the test reads /__edgeshed/*
      retryAfterSeconds: 3,
      origins: {
        users: { url: users.url, maxInFlight: 1, maxQueue: 0 },
        timed: { url: users.url, timeoutMs: 100 },
        queued: { url: users.url, maxInFlight: 1, maxQueue: 1, queueTimeoutMs: 50 },
        slow: { url: users.url },
        down: { url: `http://127.0.0.1:${downPort}` },
        other: { url: other.url },
        deep: { url: users.url, maxInFlight: 1, maxQueue: 1, queueTimeoutMs: 2000 },
      },
      routes: [
        { path: "/users", fanout: [{ origin: "users", path: "/u" }, { origin: "other", path: "/o", required: false }] },
        { path: "/timed", fanout: [{ origin: "timed", path: "/t" }] },
        { path: "/queued", fanout: [{ origin: "queued", path: "/q" }] },
        { path: "/deadline", deadlineMs: 150, fanout: [{ origin: "slow", path: "/s" }, { origin: "other", path: "/o", required: false }] },
        { path: "/deep-hold", fanout: [{ origin: "deep", path: "/hold" }] },
        { path: "/deep-deadline", deadlineMs: 150, fanout: [{ origin: "deep", path: "/dl" }] },
        { path: "/down", fanout: [{ origin: "down", path: "/d" }] },
      ],
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await Promise.all([users, other].map((o) => o?.close()));
  });

  test("required origin over capacity (shed): 503, Retry-After, scope origin:users", async () => {
    const held = gate();
    users.reset();
    other.behave(answer({ o: 1 }));
    users.behave(after(held, answer({ id: 1 })));
    const first = worker.get("/users");
    await held.arrivals(1);
    const r = await worker.get("/users");
    assert.equal(r.status, 503, r.text);
    assert.equal(r.headers.get("retry-after"), "3");
    assert.match(r.headers.get("content-type"), /^application\/json/);
    assert.deepEqual(r.json, { error: "overloaded", scope: "origin:users", reason: "limit" });
    assertTimingNames(r.headers, ["admission"]);
    held.open();
    assert.equal((await first).status, 200);
    const stats = await worker.until(idle, { what: "idle" });
    assert.equal(stats.origins.users.shed, 1);
  });

  test("required origin over capacity (queue timeout 50 ms): 503 scope origin:queued", async () => {
    const held = gate();
    users.reset();
    users.behave(after(held, answer({ q: 1 })));
    const first = worker.get("/queued");
    await held.arrivals(1);
    const start = Date.now();
    const r = await worker.get("/queued");
    const took = Date.now() - start;
    assert.equal(r.status, 503, r.text);
    assert.equal(r.headers.get("retry-after"), "3");
    assert.deepEqual(r.json, { error: "overloaded", scope: "origin:queued", reason: "queue_timeout" });
    assert.ok(took >= 40, `waited in the queue (${took} ms)`);
    held.open();
    assert.equal((await first).status, 200);
    const stats = await worker.until(idle, { what: "idle" });
    assert.equal(stats.origins.queued.queueTimeouts, 1);
    assert.equal(users.requests.length, 1, "the timed-out waiter never called the origin");
  });

  test("deadline passes before the required origin answers: 504 deadline at the deadline; permit released, fetch aborted", async () => {
    users.reset();
    other.behave(hang());
    users.behave(answer({ late: true }, { delayMs: 2000 }));
    const start = Date.now();
    const r = await worker.get("/deadline");
    const took = Date.now() - start;
    assert.equal(r.status, 504, r.text);
    assert.deepEqual(r.json, { error: "deadline" });
    assert.ok(took >= 140 && took < 1000, `answered at the 150 ms deadline, took ${took} ms`);
    assertTimingNames(r.headers, ["admission"]);
    await users.aborts(1); // the origin saw its connection go away
    const stats = await worker.until(idle, { what: "origins idle after the deadline" });
    assert.equal(stats.origins.slow.inFlight, 0);
    assert.equal(stats.global.inFlight, 0);
    other.behave(answer({ o: 1 }));
  });

  test("the deadline also bounds the wait in the origin's queue: 504 deadline, not a 2 s queue wait", async () => {
    const held = gate();
    users.reset();
    users.behave(after(held, answer({ held: true })));
    const holder = worker.get("/deep-hold");
    await held.arrivals(1);
    const start = Date.now();
    const r = await worker.get("/deep-deadline");
    const took = Date.now() - start;
    assert.equal(r.status, 504, r.text);
    assert.deepEqual(r.json, { error: "deadline" });
    assert.ok(took >= 140 && took < 1000, `answered at the 150 ms deadline, took ${took} ms`);
    const mid = await worker.stats();
    assert.equal(mid.origins.deep.queued, 0, "the expired waiter left the queue");
    assert.equal(mid.origins.deep.inFlight, 1, "the holder still has its permit");
    held.open();
    assert.equal((await holder).status, 200);
    await worker.until(idle, { what: "idle" });
    assert.equal(users.requests.length, 1, "the expired waiter never called the origin");
  });

  test("required origin's own timeoutMs passes first: 504 timeout naming the origin", async () => {
    users.reset();
    other.behave(answer({ o: 1 }));
    users.behave(hang());
    const start = Date.now();
    const r = await worker.get("/timed");
    const took = Date.now() - start;
    assert.equal(r.status, 504, r.text);
    assert.deepEqual(r.json, { error: "timeout", origin: "timed" });
    assert.ok(took >= 90 && took < 1500, `answered at the 100 ms timeout, took ${took} ms`);
    assertTimingNames(r.headers, ["admission", "timed"]);
    await users.aborts(1);
    await worker.until(idle, { what: "idle" });
  });

  test("required origin unreachable (closed port): 502 bad_gateway without status", async () => {
    const r = await worker.get("/down");
    assert.equal(r.status, 502, r.text);
    assert.deepEqual(r.json, { error: "bad_gateway", origin: "down" });
    assertTimingNames(r.headers, ["admission", "down"]);
  });

  test("required origin resets the connection: 502 bad_gateway without status", async () => {
    users.behave(reset());
    const r = await worker.get("/users");
    assert.equal(r.status, 502, r.text);
    assert.deepEqual(r.json, { error: "bad_gateway", origin: "users" });
  });

  for (const status of [500, 404, 429]) {
    test(`required origin answers ${status}: 502 bad_gateway with "status": ${status}`, async () => {
      users.behave(answer({ nope: true }, { status }));
      const r = await worker.get("/users");
      assert.equal(r.status, 502, r.text);
      assert.deepEqual(r.json, { error: "bad_gateway", origin: "users", status });
    });
  }

  test("a client that goes away mid fan-out: the permits come back once the origin answers", async () => {
    const held = gate();
    users.reset();
    other.behave(answer({ o: 1 }));
    users.behave(after(held, answer({ id: 1 })));
    const controller = new AbortController();
    const pending = worker.fetch("/users", { signal: controller.signal });
    await held.arrivals(1);
    controller.abort();
    await assert.rejects(pending, { name: "AbortError" });
    held.open();
    await worker.until(idle, { what: "idle after the abandoned fan-out" });
    users.behave(answer({ id: 2 }));
    const r = await worker.get("/users");
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.results.users, { id: 2 });
  });

  test("afterwards nothing is held", async () => {
    const stats = await worker.until(idle, { what: "idle" });
    for (const [name, scope] of Object.entries({ global: stats.global, ...stats.origins })) {
      assert.equal(scope.inFlight, 0, name);
      assert.equal(scope.queued, 0, name);
    }
  });
});

describe("fan-out: global over capacity", () => {
  let users, worker;
  before(async () => {
    users = await startOrigin("users");
    worker = await startWorker({
      statsPublic: true, // the test reads /__edgeshed/*
      retryAfterSeconds: 7,
      global: { maxInFlight: 1 },
      origins: { users: { url: users.url } },
      routes: [{ path: "/agg", fanout: [{ origin: "users", path: "/u" }] }],
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await users?.close();
  });

  test("global maxInFlight 1 with a held request: 503 scope global, Retry-After; stats still answer", async () => {
    const held = gate();
    users.behave(after(held, answer({ id: 1 })));
    const first = worker.get("/agg");
    await held.arrivals(1);
    const r = await worker.get("/agg");
    assert.equal(r.status, 503, r.text);
    assert.equal(r.headers.get("retry-after"), "7");
    assert.deepEqual(r.json, { error: "overloaded", scope: "global", reason: "limit" });
    assertTimingNames(r.headers, ["admission"]);
    // /__edgeshed/* bypasses the (full) global limiter.
    const stats = await worker.stats();
    assert.equal(stats.global.inFlight, 1);
    assert.equal(stats.global.shed, 1);
    assert.equal(users.requests.length, 1);
    held.open();
    const ok = await first;
    assert.equal(ok.status, 200, ok.text);
    await worker.until(idle, { what: "idle" });
    assert.equal((await worker.get("/agg")).status, 200);
  });
});

describe("fan-out wider than 6 connections", () => {
  let shared, worker;
  const names = ["o1", "o2", "o3", "o4", "o5", "o6", "o7", "o8"];
  before(async () => {
    shared = await startOrigin("shared");
    shared.behave(async (req, res) => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ path: req.url }));
    });
    worker = await startWorker({
      statsPublic: true, // the test reads /__edgeshed/*
      origins: Object.fromEntries(names.map((n) => [n, { url: shared.url, timeoutMs: 3000 }])),
      routes: [{ path: "/wide", deadlineMs: 3000, fanout: names.map((n) => ({ origin: n, path: `/${n}` })) }],
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await shared?.close();
  });

  test("8 entries to 8 origin names (one server): 200 with every result and every origin in Server-Timing", async () => {
    const r = await worker.get("/wide");
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, {
      results: Object.fromEntries(names.map((n) => [n, { path: `/${n}` }])),
      degraded: [],
    });
    assertTimingNames(r.headers, ["admission", ...names]);
    assert.equal(shared.requests.length, 8);
    await worker.until(idle, { what: "idle" });
  });
});

describe("fan-out: a call shed after its sibling was admitted", () => {
  let held, free, worker;
  before(async () => {
    held = await startOrigin("held");
    free = await startOrigin("free");
    // The entry counts every fetch() the gateway starts (tests/worker/support/counting-fetch.mjs).
    worker = await startWorker(
      {
        statsPublic: true,
        origins: { free: { url: free.url }, solo: { url: held.url, maxInFlight: 1, maxQueue: 0 } },
        routes: [
          { path: "/hold", fanout: [{ origin: "solo", path: "/hold" }] },
          // free first: it is admitted before solo is shed, in the same poll.
          { path: "/pair", fanout: [{ origin: "free", path: "/p" }, { origin: "solo", path: "/s" }] },
        ],
      },
      { scriptPath: "tests/worker/support/counting-fetch.mjs" },
    );
  });
  afterAll(async () => {
    await worker?.dispose();
    await Promise.all([held, free].map((o) => o?.close()));
  });

  test("503 for the shed one, and no fetch is even started for the admitted sibling", async () => {
    const gateOpen = gate();
    held.behave(after(gateOpen, answer({ held: 1 })));
    free.behave(answer({ p: 1 }));
    const first = worker.get("/hold");
    await gateOpen.arrivals(1);
    const r = await worker.get("/pair");
    assert.equal(r.status, 503, r.text);
    assert.deepEqual(r.json, { error: "overloaded", scope: "origin:solo", reason: "limit" });
    gateOpen.open();
    assert.equal((await first).status, 200);
    await worker.until(idle, { what: "idle" });
    const fetched = (await worker.get("/__test/fetches")).json;
    assert.deepEqual(fetched.map((url) => new URL(url).pathname), ["/hold"], "only the held call was fetched");
    assert.equal(free.requests.length, 0);
  });
});
